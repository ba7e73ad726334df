/**
 * Configuration of the merge role (`tidemark merge`, docs/decisions/0029-two-stage-dataflow.md),
 * parsed once from the same sources as the engine's (config file, TIDEMARK_* environment, flags)
 * and validated the same way. What differs: the operator reads every TM_EVENTS partition's
 * partials, so it owns them all; its id comes from `--worker` or TIDEMARK_MERGE_ID (default
 * `merge-<m>`, below), never from a worker's `engine.worker` or TIDEMARK_WORKER; it has no session windows
 * and emits no partials of its own. It runs every policy: a percentile watermark from the
 * partitions' delay quantiles the partials carry. With several merge partitions (top-level
 * `mergePartitions`), `--merge-partition` or TIDEMARK_MERGE_PARTITION (default 0) says which one it
 * reads, and the default id is `merge-<partition>` (docs/decisions/0033-merge-partitions.md).
 */
import { ENGINE_FLAGS, parseEngineConfig, type EngineConfig, type EngineConfigSources } from "./config.js";
import { ConfigFieldError, integer, settingOf, subjectOf, type SettingNames } from "../../config/index.js";
import { RuntimeError, badSetting } from "../errors.js";

export interface MergeConfig extends EngineConfig {
  /** The merge partition of TM_PARTIALS this operator reads (`tm.partials.<n>`). */
  readonly mergePartition: number;
}

/** Engine flags with no meaning for a merge operator. */
const NOT_FOR_MERGE = ["partitions", "sessions", "session-gap", "session-max-length", "session-max-keys", "partials"];

/** Every flag `tidemark merge` accepts besides --config. */
export const MERGE_FLAGS: readonly string[] = [
  ...ENGINE_FLAGS.filter((f) => !NOT_FOR_MERGE.includes(f)),
  "merge-partition",
];

export function parseMergeConfig(src: EngineConfigSources = {}): MergeConfig {
  const env = {
    ...src.env,
    TIDEMARK_WORKER: undefined,
    TIDEMARK_PARTITIONS: undefined,
    TIDEMARK_SESSIONS: undefined,
    TIDEMARK_PARTIALS: undefined,
  };
  const file = withoutWorkerKeys(src.file);
  const m = mergePartitionOf(src);
  const id = src.flags?.worker ?? src.env?.TIDEMARK_MERGE_ID ?? `merge-${m.v}`;
  const flags = { ...src.flags, worker: id, partitions: "all", sessions: "off", partials: undefined };
  delete (flags as Record<string, string | undefined>)["merge-partition"];
  const base = parseEngineConfig({ ...src, file, env, flags });
  if (m.v >= base.mergePartitions)
    throw badSetting(
      m.where,
      `below mergePartitions (${base.mergePartitions}): one merge operator per merge partition, 0 to ${base.mergePartitions - 1}`,
      m.v,
    );
  return Object.freeze({
    ...base,
    partials: false,
    mergePartition: m.v,
  });
}

/** The merge partition's names: `--merge-partition`, else TIDEMARK_MERGE_PARTITION; not in the file (default 0). */
const MERGE_PARTITION: SettingNames = {
  field: "mergePartition",
  env: ["TIDEMARK_MERGE_PARTITION"],
  flag: "merge-partition",
};

/** The merge partition this operator reads, and a subject naming where it came from. */
function mergePartitionOf(src: EngineConfigSources): { v: number; where: string } {
  const s = settingOf(MERGE_PARTITION, { env: src.env, flags: src.flags });
  if (s === undefined) return { v: 0, where: "default" };
  try {
    // mergePartitions is at most 64 (config.ts), so a merge partition is at most 63.
    return {
      v: integer(0, 63)(s.value, MERGE_PARTITION.field, s.source),
      where: subjectOf(MERGE_PARTITION.field, s.source),
    };
  } catch (err) {
    if (err instanceof ConfigFieldError) throw new RuntimeError("TM_ENGINE_BAD_CONFIG", err.message);
    throw err;
  }
}

/** The file without the settings of a worker's identity (engine.worker, engine.partitions, engine.sessions). */
function withoutWorkerKeys(file: unknown): unknown {
  if (typeof file !== "object" || file === null || Array.isArray(file)) return file;
  const f = file as Record<string, unknown>;
  const engine = f.engine;
  if (typeof engine !== "object" || engine === null || Array.isArray(engine)) return file;
  const { worker: _w, partitions: _p, sessions: _s, partials: _x, ...rest } = engine as Record<string, unknown>;
  return { ...f, engine: rest };
}
