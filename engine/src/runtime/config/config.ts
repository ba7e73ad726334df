/**
 * Configuration of the engine role, parsed once: defaults < the config file (tidemark.config.json:
 * its `engine` section, and the shared top-level `data`, `nats.url`, `partitionCount` and core keys)
 * < TIDEMARK_* environment < flags, read with the shared reader (`@tidemark/engine/config`,
 * docs/decisions/0046-layered-config.md). Validated (every error names the field, where its value
 * came from and the fix) and frozen. The core part goes through the core's own validator, with `partitions` set to the
 * number of owned partitions (the core sees lanes 0..n-1).
 */
import { validateCoreConfig, type CoreConfig, type SessionConfig } from "../../core/index.js";
import { DEFAULT_PARTITIONS, PARTITION_BY, type PartitionBy } from "../../protocol.js";
import {
  ConfigFieldError,
  coreSettingsOf,
  duration,
  integer,
  oneOf,
  onOff,
  readSetting,
  settingOf,
  subjectOf,
  text,
  type ConfigSources,
  type FieldReader,
  type SettingNames,
} from "../../config/index.js";
import { RuntimeError, badSetting as bad } from "../errors.js";
import { parseSessionsSetting } from "./sessions-config.js";
import { ENGINE_KEYS, ENGINE_SETTINGS } from "./engine-settings.js";
import { sloLatencyThresholds } from "./slo-thresholds.js";
import { formatPartitionList, parsePartitionList } from "../input/partition-list.js";

export { ENGINE_FLAGS } from "./engine-settings.js";

export interface EngineConfig {
  /** Stable worker id; names the checkpoint directory and the status messages. */
  readonly worker: string;
  readonly natsUrl: string;
  readonly dataDir: string;
  /** `<dataDir>/checkpoints/<worker>`. */
  readonly checkpointDir: string;
  /** Partitions of TM_EVENTS in total (P). */
  readonly partitionCount: number;
  /** Partitions this worker owns, sorted; the core sees them as 0..owned.length-1. */
  readonly partitions: readonly number[];
  /** Checkpoint every this much log time. */
  readonly checkpointEveryMs: number;
  /** At least this much wall clock between two checkpoints (bounds the cost during catch-up). */
  readonly checkpointMinWallMs: number;
  /**
   * An aligned checkpoint of which nothing is heard for this long is aborted (the coordinator's;
   * operators held by backpressure say they wait twice as often, docs/decisions/0035-backpressure.md).
   */
  readonly checkpointTimeoutMs: number;
  readonly keepCheckpoints: number;
  /**
   * A partition with no event for this long of log time is idle: the core's judgement
   * (docs/semantics.md, "Watermarks"); heartbeats keep its time moving, not its activity.
   */
  readonly idleTimeoutMs: number;
  readonly statusEveryMs: number;
  /** Undefined: 9464 when free, else any free port. 0: any free port. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /**
   * The bounds that make a slow or stalled NATS show as held input rather than memory
   * (docs/decisions/0035-backpressure.md): pane and late publishes in flight (messages, bytes of
   * their bodies; TM_PARTIALS's queue is bounded by the same bytes), events queued per owned
   * partition between its consumer and the core, and partials a merge operator holds while it
   * aligns a checkpoint.
   */
  readonly maxInFlight: number;
  readonly maxInFlightBytes: number;
  readonly maxQueuedEvents: number;
  readonly maxAlignmentBytes: number;
  readonly core: CoreConfig;
  /** Session windows (docs/operations.md, "Engine workers"): their settings when on, null when off (the default). */
  readonly sessions: Readonly<SessionConfig> | null;
  /**
   * Emit stage-1 partial batches to TM_PARTIALS for the merge stage (`tidemark merge`,
   * docs/decisions/0029-two-stage-dataflow.md). On by default.
   */
  readonly partials: boolean;
  /**
   * Gzip each TM_PANES / TM_LATE message body (docs/decisions/0034-sessions-at-scale.md): readers
   * take both (`paneBodyLines`). On by default; off for bodies a person can read with a NATS CLI.
   */
  readonly compressPanes: boolean;
  /**
   * What chooses an event's partition (top-level `partitionBy`, shared with ingest and backfill;
   * docs/decisions/0032-partition-by-route.md). With "service+route" a service's events spread over
   * partitions: workers publish its route panes and its service-level partials, and the merge stage
   * its service panes.
   */
  readonly partitionBy: PartitionBy;
  /**
   * Merge partitions of TM_PARTIALS (top-level `mergePartitions`, default 1;
   * docs/decisions/0033-merge-partitions.md): a worker cuts each partial batch by them, and one
   * merge operator reads each.
   */
  readonly mergePartitions: number;
  /**
   * A savepoint to restore from (`--from-savepoint DIR`; docs/decisions/0057-elastic-workers.md):
   * the role restores its partitions from it unless its data directory already holds checkpoints of
   * the restore epoch it began (null: none).
   */
  readonly fromSavepoint: string | null;
}

/** The raw sources, each optional; values are strings as typed (flags, env) or JSON (file). */
export interface EngineConfigSources {
  /** The parsed config file (`engine` section; top-level `data`, `nats.url`, `partitionCount`, core keys). */
  file?: unknown;
  fileName?: string;
  env?: Readonly<Record<string, string | undefined>>;
  flags?: Readonly<Record<string, string | undefined>>;
}

type Raw = Record<string, unknown>;

const MIB = 1024 * 1024;

/** A setting's value and where it came from (`where` names the field and its source, for messages). */
interface Found {
  v: unknown;
  where: string;
}

export function parseEngineConfig(src: EngineConfigSources = {}): EngineConfig {
  const fileName = src.fileName ?? "config file";
  const file = isObj(src.file) ? src.file : {};
  const section = file.engine === undefined ? {} : file.engine;
  if (!isObj(section)) throw bad(`${fileName}: engine`, "an object", section);
  for (const k of Object.keys(section))
    if (!(ENGINE_KEYS as readonly string[]).includes(k))
      throw bad(`${fileName}: engine.${k}`, `one of the known keys (${ENGINE_KEYS.join(", ")})`, k);
  const layers: ConfigSources = { file, fileName, env: src.env, flags: src.flags };
  const get = (key: string): Found => found(key, layers);
  const read = <T>(key: string, reader: FieldReader<T>, fallback: T): T => readAs(key, layers, reader, fallback);

  if (file.partitions !== undefined)
    throw new RuntimeError(
      "TM_ENGINE_BAD_CONFIG",
      `${fileName}: the top-level "partitions" is now "partitionCount" (the partition count of TM_EVENTS; ` +
        `an engine's owned set is engine.partitions): rename the key`,
    );
  const partitionCount = read("partitionCount", integer(1, 4096), DEFAULT_PARTITIONS);
  const pv = get("partitions");
  const partitions = parsePartitionList(
    pv.v === undefined ? "all" : read("partitions", text(), ""),
    partitionCount,
    pv.where,
  );
  const worker = read("worker", text(/^[A-Za-z0-9_.-]+$/), `engine-${formatPartitionList(partitions)}`);
  const dataDir = read("data", text(), "data");
  const idleTimeoutMs = read("idleTimeout", duration(1), 10_000);
  // Idleness is judged by the core in log time (docs/decisions/0010-core-state-and-idleness.md).
  const coreInput: Raw = { ...coreSettingsOf(file), partitions: partitions.length, idleTimeout: idleTimeoutMs };
  coreInput.latencyThresholdsMs = sloLatencyThresholds(file.slos, fileName);
  const core = validateCoreConfig(coreInput, fileName);
  const sessions = parseSessionsSetting(section.sessions, fileName, (key) => get(key));
  const pb = get("partitionBy");
  const partitionBy = read<PartitionBy>("partitionBy", oneOf(PARTITION_BY), "service");
  const partials = read("partials", onOff(), true);
  // Off by default: binary bodies are sent as written (docs/decisions/0047-binary-panes.md, decision 4).
  const compressPanes = read("compressPanes", onOff(), false);
  if (partitionBy === "service+route" && sessions !== null)
    throw bad(
      pb.where,
      `"service" while session windows are on (engine.sessions.enabled, --sessions): a user's sessions need all of ` +
        `their events in one place; turn sessions off or partition by service`,
      pb.v,
    );
  if (partitionBy === "service+route" && !partials)
    throw bad(
      pb.where,
      `"service" while partials are off (engine.partials, --partials off): the service panes then come from the merge stage`,
      pb.v,
    );
  return Object.freeze({
    worker,
    natsUrl: read("nats", text(/^(nats|tls):\/\/\S+$/), "nats://127.0.0.1:4222"),
    dataDir,
    checkpointDir: `${dataDir}/checkpoints/${worker}`,
    partitionCount,
    partitions: Object.freeze(partitions),
    checkpointEveryMs: read("checkpointEvery", duration(1), 5_000),
    checkpointMinWallMs: read("checkpointMinWall", duration(0), 1_000),
    checkpointTimeoutMs: read("checkpointTimeout", duration(1_000), 60_000),
    keepCheckpoints: read("keepCheckpoints", integer(1, 1000), 3),
    idleTimeoutMs,
    statusEveryMs: read("statusEvery", duration(1), 1_000),
    metricsPort: read<number | undefined>("metricsPort", integer(0, 65535), undefined),
    metricsHost: read("metricsHost", text(), "127.0.0.1"),
    maxInFlight: read("maxInFlight", integer(1, 1_000_000), 4096),
    maxInFlightBytes: read("maxInFlightBytes", integer(MIB, 16 * 1024 * MIB), 64 * MIB),
    maxQueuedEvents: read("maxQueuedEvents", integer(1, 100_000_000), 65_536),
    maxAlignmentBytes: read("maxAlignmentBytes", integer(MIB, 16 * 1024 * MIB), 64 * MIB),
    core,
    sessions,
    partials,
    compressPanes,
    partitionBy,
    mergePartitions: read("mergePartitions", integer(1, 64), 1),
    fromSavepoint: read<string | null>("fromSavepoint", text(), null),
  });
}

function namesOf(key: string): SettingNames {
  const names = ENGINE_SETTINGS[key];
  if (names === undefined) throw new Error(`unknown engine setting ${key}`);
  return names;
}

/** The strongest layer's value of `key` and a subject naming the field and its source. */
function found(key: string, layers: ConfigSources): Found {
  const names = namesOf(key);
  const s = settingOf(names, layers);
  if (s !== undefined) return { v: s.value, where: subjectOf(names.field, s.source) };
  return { v: undefined, where: `${layers.fileName ?? "config file"}: ${names.file ?? names.field}` };
}

/** `key` through `reader` in every layer, or `fallback` when unset; a bad value is TM_ENGINE_BAD_CONFIG naming field and source. */
function readAs<T>(key: string, layers: ConfigSources, reader: FieldReader<T>, fallback: T): T {
  try {
    return readSetting(namesOf(key), layers, reader, fallback);
  } catch (err) {
    if (err instanceof ConfigFieldError) throw new RuntimeError("TM_ENGINE_BAD_CONFIG", err.message);
    throw err;
  }
}

function isObj(v: unknown): v is Raw {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
