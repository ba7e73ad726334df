/**
 * Configuration of the engine role, parsed once: defaults < the config file (tidemark.config.json:
 * its `engine` section, and the shared top-level `data`, `nats.url`, `partitionCount` and core keys)
 * < TIDEMARK_* environment < flags. Validated (every error names the field and the fix) and
 * frozen. The core part goes through the core's own validator, with `partitions` set to the
 * number of owned partitions (the core sees lanes 0..n-1).
 */
import { parseDuration, validateCoreConfig, type CoreConfig, type SessionConfig } from "../../core/index.js";
import { DEFAULT_PARTITIONS, PARTITION_BY, type PartitionBy } from "../../protocol.js";
import { RuntimeError, badSetting as bad } from "../errors.js";
import { parseSessionsSetting } from "./sessions-config.js";
import { sloLatencyThresholds } from "./slo-thresholds.js";
import { formatPartitionList, parsePartitionList } from "../input/partition-list.js";

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

/** Settings read from the top level of the file rather than the `engine` section. */
const TOP_LEVEL: Record<string, string> = {
  nats: "nats.url",
  data: "data",
  partitionCount: "partitionCount",
  partitionBy: "partitionBy",
  mergePartitions: "mergePartitions",
};

/** The core's keys at the top level of the config file (shared with `frontier`). */
const CORE_KEYS = [
  "policies",
  "windows",
  "referenceHorizon",
  "biasWindows",
  "routeCapPerService",
  "serviceCap",
  "keyTtl",
  "relativeAccuracy",
  "hllPrecision",
];

const ENGINE_KEYS = [
  "worker",
  "partitions",
  "checkpointEvery",
  "checkpointMinWall",
  "checkpointTimeout",
  "keepCheckpoints",
  "idleTimeout",
  "statusEvery",
  "metricsPort",
  "metricsHost",
  "maxInFlight",
  "maxInFlightBytes",
  "maxQueuedEvents",
  "maxAlignmentBytes",
  "sessions",
  "partials",
  "compressPanes",
] as const;

/** Env variable and flag for each setting (flags win over env, env over the file). */
const SOURCES: Record<string, { env: string; flag: string }> = {
  worker: { env: "TIDEMARK_WORKER", flag: "worker" },
  partitions: { env: "TIDEMARK_PARTITIONS", flag: "partitions" },
  partitionCount: { env: "TIDEMARK_PARTITION_COUNT", flag: "partition-count" },
  checkpointEvery: { env: "TIDEMARK_CHECKPOINT_EVERY", flag: "checkpoint-every" },
  checkpointMinWall: { env: "TIDEMARK_CHECKPOINT_MIN_WALL", flag: "checkpoint-min-wall" },
  checkpointTimeout: { env: "TIDEMARK_CHECKPOINT_TIMEOUT", flag: "checkpoint-timeout" },
  keepCheckpoints: { env: "TIDEMARK_KEEP_CHECKPOINTS", flag: "keep-checkpoints" },
  idleTimeout: { env: "TIDEMARK_IDLE_TIMEOUT", flag: "idle-timeout" },
  statusEvery: { env: "TIDEMARK_STATUS_EVERY", flag: "status-every" },
  metricsPort: { env: "TIDEMARK_METRICS_PORT", flag: "metrics-port" },
  metricsHost: { env: "TIDEMARK_METRICS_HOST", flag: "metrics-host" },
  maxInFlight: { env: "TIDEMARK_MAX_IN_FLIGHT", flag: "max-in-flight" },
  maxInFlightBytes: { env: "TIDEMARK_MAX_IN_FLIGHT_BYTES", flag: "max-in-flight-bytes" },
  maxQueuedEvents: { env: "TIDEMARK_MAX_QUEUED_EVENTS", flag: "max-queued-events" },
  maxAlignmentBytes: { env: "TIDEMARK_MAX_ALIGNMENT_BYTES", flag: "max-alignment-bytes" },
  data: { env: "TIDEMARK_DATA", flag: "data" },
  nats: { env: "TIDEMARK_NATS_URL", flag: "nats" },
  sessions: { env: "TIDEMARK_SESSIONS", flag: "sessions" },
  sessionGap: { env: "TIDEMARK_SESSION_GAP", flag: "session-gap" },
  sessionMaxLength: { env: "TIDEMARK_SESSION_MAX_LENGTH", flag: "session-max-length" },
  sessionMaxKeys: { env: "TIDEMARK_SESSION_MAX_KEYS", flag: "session-max-keys" },
  partials: { env: "TIDEMARK_PARTIALS", flag: "partials" },
  compressPanes: { env: "TIDEMARK_COMPRESS_PANES", flag: "compress-panes" },
  partitionBy: { env: "TIDEMARK_PARTITION_BY", flag: "partition-by" },
  mergePartitions: { env: "TIDEMARK_MERGE_PARTITIONS", flag: "merge-partitions" },
};

/** Every flag `tidemark engine` accepts besides --config. */
export const ENGINE_FLAGS: readonly string[] = Object.values(SOURCES).map((s) => s.flag);

export function parseEngineConfig(src: EngineConfigSources = {}): EngineConfig {
  const fileName = src.fileName ?? "config file";
  const file = isObj(src.file) ? src.file : {};
  const section = file.engine === undefined ? {} : file.engine;
  if (!isObj(section)) throw bad(`${fileName}: engine`, "an object", section);
  for (const k of Object.keys(section))
    if (!(ENGINE_KEYS as readonly string[]).includes(k))
      throw bad(`${fileName}: engine.${k}`, `one of the known keys (${ENGINE_KEYS.join(", ")})`, k);
  const nats = isObj(file.nats) ? file.nats.url : undefined;
  const value = (
    key: string,
    fileValue: unknown,
    filePath = TOP_LEVEL[key] ?? `engine.${key}`,
  ): { v: unknown; where: string } => {
    const s = SOURCES[key] as { env: string; flag: string };
    const flag = src.flags?.[s.flag];
    if (flag !== undefined) return { v: flag, where: `--${s.flag}` };
    const env = src.env?.[s.env] ?? (key === "nats" ? src.env?.TIDEMARK_NATS : undefined);
    if (env !== undefined && env !== "") return { v: env, where: s.env };
    return { v: fileValue, where: `${fileName}: ${filePath}` };
  };
  const get = (key: string): { v: unknown; where: string } => value(key, section[key]);

  if (file.partitions !== undefined)
    throw new RuntimeError(
      "TM_ENGINE_BAD_CONFIG",
      `${fileName}: the top-level "partitions" is now "partitionCount" (the partition count of TM_EVENTS; ` +
        `an engine's owned set is engine.partitions): rename the key`,
    );
  const partitionCount = int(value("partitionCount", file.partitionCount), DEFAULT_PARTITIONS, 1, 4096);
  const pv = get("partitions");
  const partitions = parsePartitionList(pv.v === undefined ? "all" : str(pv), partitionCount, pv.where);
  const wv = get("worker");
  const worker = wv.v === undefined ? `engine-${formatPartitionList(partitions)}` : str(wv, /^[A-Za-z0-9_.-]+$/);
  const dv = value("data", file.data);
  const dataDir = dv.v === undefined ? "data" : str(dv);
  const nv = value("nats", nats);
  const mp = get("metricsPort");
  const idleTimeoutMs = duration(get("idleTimeout"), 10_000);
  const coreInput: Raw = { partitions: partitions.length };
  for (const k of CORE_KEYS) if (file[k] !== undefined) coreInput[k] = file[k];
  // Idleness is judged by the core in log time (docs/decisions/0010-core-state-and-idleness.md).
  coreInput.idleTimeout = idleTimeoutMs;
  coreInput.latencyThresholdsMs = sloLatencyThresholds(file.slos, fileName);
  const core = validateCoreConfig(coreInput, fileName);
  const sessions = parseSessionsSetting(section.sessions, fileName, value);
  const pb = value("partitionBy", file.partitionBy);
  const partitionBy = partitionByOf(pb);
  const partials = onOff(get("partials"), true);
  const compressPanes = onOff(get("compressPanes"), true);
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
    natsUrl: nv.v === undefined ? "nats://127.0.0.1:4222" : str(nv, /^(nats|tls):\/\/\S+$/),
    dataDir,
    checkpointDir: `${dataDir}/checkpoints/${worker}`,
    partitionCount,
    partitions: Object.freeze(partitions),
    checkpointEveryMs: duration(get("checkpointEvery"), 5_000),
    checkpointMinWallMs: duration(get("checkpointMinWall"), 1_000, 0),
    checkpointTimeoutMs: duration(get("checkpointTimeout"), 60_000, 1_000),
    keepCheckpoints: int(get("keepCheckpoints"), 3, 1, 1000),
    idleTimeoutMs,
    statusEveryMs: duration(get("statusEvery"), 1_000),
    metricsPort: mp.v === undefined ? undefined : int(mp, 0, 0, 65535),
    metricsHost: (() => {
      const h = get("metricsHost");
      return h.v === undefined ? "127.0.0.1" : str(h);
    })(),
    maxInFlight: int(get("maxInFlight"), 4096, 1, 1_000_000),
    maxInFlightBytes: int(get("maxInFlightBytes"), 64 * MIB, MIB, 16 * 1024 * MIB),
    maxQueuedEvents: int(get("maxQueuedEvents"), 65_536, 1, 100_000_000),
    maxAlignmentBytes: int(get("maxAlignmentBytes"), 64 * MIB, MIB, 16 * 1024 * MIB),
    core,
    sessions,
    partials,
    compressPanes,
    partitionBy,
    mergePartitions: int(value("mergePartitions", file.mergePartitions), 1, 1, 64),
  });
}

function isObj(v: unknown): v is Raw {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(x: { v: unknown; where: string }, pattern?: RegExp): string {
  if (typeof x.v !== "string" || x.v === "" || (pattern && !pattern.test(x.v)))
    throw bad(x.where, pattern ? `a string matching ${pattern.source}` : "a non-empty string", x.v);
  return x.v;
}

function int(x: { v: unknown; where: string }, fallback: number, min: number, max: number): number {
  if (x.v === undefined) return fallback;
  const n = typeof x.v === "string" && x.v.trim() !== "" ? Number(x.v) : x.v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    throw bad(x.where, `a whole number from ${min} to ${max}`, x.v);
  return n;
}

function partitionByOf(x: { v: unknown; where: string }): PartitionBy {
  if (x.v === undefined) return "service";
  if ((PARTITION_BY as readonly unknown[]).includes(x.v)) return x.v as PartitionBy;
  throw bad(x.where, `one of ${PARTITION_BY.map((p) => `"${p}"`).join(", ")}`, x.v);
}

function onOff(x: { v: unknown; where: string }, fallback: boolean): boolean {
  if (x.v === undefined) return fallback;
  const v = typeof x.v === "string" ? x.v.toLowerCase() : x.v;
  if (v === true || ["1", "true", "on", "yes"].includes(v as string)) return true;
  if (v === false || ["0", "false", "off", "no"].includes(v as string)) return false;
  throw bad(x.where, `"on" or "off"`, x.v);
}

function duration(x: { v: unknown; where: string }, fallback: number, min = 1): number {
  if (x.v === undefined) return fallback;
  let ms: number;
  try {
    ms = typeof x.v === "string" || typeof x.v === "number" ? parseDuration(x.v) : NaN;
  } catch {
    ms = NaN;
  }
  if (!(ms >= min)) throw bad(x.where, `a duration such as "500ms", "10s" or "1m" (at least ${min} ms)`, x.v);
  return ms;
}
