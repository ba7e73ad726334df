/**
 * The names each engine setting goes by (docs/operations.md, "Engine workers"): its key in the
 * config file (the `engine` section, or the top level for the settings every role shares), its
 * TIDEMARK_* variable and its flag. Read by config.ts through `@tidemark/engine/config`.
 */
import type { SettingNames } from "../../config/index.js";

/** Keys of the file's `engine` section. */
export const ENGINE_KEYS = [
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
  "fromSavepoint",
] as const;

/** Settings read from the top level of the file rather than the `engine` section. */
const TOP_LEVEL: Readonly<Record<string, string>> = {
  nats: "nats.url",
  data: "data",
  partitionCount: "partitionCount",
  partitionBy: "partitionBy",
  mergePartitions: "mergePartitions",
};

/** The session settings, inside `engine.sessions`. */
const IN_SESSIONS: Readonly<Record<string, string>> = {
  sessions: "engine.sessions.enabled",
  sessionGap: "engine.sessions.gap",
  sessionMaxLength: "engine.sessions.maxLength",
  sessionMaxKeys: "engine.sessions.maxKeys",
};

/** Env variable (or variables, the first winning) and flag of each setting. */
const ENV_AND_FLAG: Readonly<Record<string, { env: readonly string[]; flag: string }>> = {
  worker: { env: ["TIDEMARK_WORKER"], flag: "worker" },
  partitions: { env: ["TIDEMARK_PARTITIONS"], flag: "partitions" },
  partitionCount: { env: ["TIDEMARK_PARTITION_COUNT"], flag: "partition-count" },
  checkpointEvery: { env: ["TIDEMARK_CHECKPOINT_EVERY"], flag: "checkpoint-every" },
  checkpointMinWall: { env: ["TIDEMARK_CHECKPOINT_MIN_WALL"], flag: "checkpoint-min-wall" },
  checkpointTimeout: { env: ["TIDEMARK_CHECKPOINT_TIMEOUT"], flag: "checkpoint-timeout" },
  keepCheckpoints: { env: ["TIDEMARK_KEEP_CHECKPOINTS"], flag: "keep-checkpoints" },
  idleTimeout: { env: ["TIDEMARK_IDLE_TIMEOUT"], flag: "idle-timeout" },
  statusEvery: { env: ["TIDEMARK_STATUS_EVERY"], flag: "status-every" },
  metricsPort: { env: ["TIDEMARK_METRICS_PORT"], flag: "metrics-port" },
  metricsHost: { env: ["TIDEMARK_METRICS_HOST"], flag: "metrics-host" },
  maxInFlight: { env: ["TIDEMARK_MAX_IN_FLIGHT"], flag: "max-in-flight" },
  maxInFlightBytes: { env: ["TIDEMARK_MAX_IN_FLIGHT_BYTES"], flag: "max-in-flight-bytes" },
  maxQueuedEvents: { env: ["TIDEMARK_MAX_QUEUED_EVENTS"], flag: "max-queued-events" },
  maxAlignmentBytes: { env: ["TIDEMARK_MAX_ALIGNMENT_BYTES"], flag: "max-alignment-bytes" },
  data: { env: ["TIDEMARK_DATA"], flag: "data" },
  nats: { env: ["TIDEMARK_NATS_URL", "TIDEMARK_NATS"], flag: "nats" },
  sessions: { env: ["TIDEMARK_SESSIONS"], flag: "sessions" },
  sessionGap: { env: ["TIDEMARK_SESSION_GAP"], flag: "session-gap" },
  sessionMaxLength: { env: ["TIDEMARK_SESSION_MAX_LENGTH"], flag: "session-max-length" },
  sessionMaxKeys: { env: ["TIDEMARK_SESSION_MAX_KEYS"], flag: "session-max-keys" },
  partials: { env: ["TIDEMARK_PARTIALS"], flag: "partials" },
  compressPanes: { env: ["TIDEMARK_COMPRESS_PANES"], flag: "compress-panes" },
  partitionBy: { env: ["TIDEMARK_PARTITION_BY"], flag: "partition-by" },
  mergePartitions: { env: ["TIDEMARK_MERGE_PARTITIONS"], flag: "merge-partitions" },
  fromSavepoint: { env: ["TIDEMARK_FROM_SAVEPOINT"], flag: "from-savepoint" },
};

/** Every engine setting by its short key, with its names in each layer. */
export const ENGINE_SETTINGS: Readonly<Record<string, SettingNames>> = Object.fromEntries(
  Object.entries(ENV_AND_FLAG).map(([key, { env, flag }]) => {
    const file = TOP_LEVEL[key] ?? IN_SESSIONS[key] ?? `engine.${key}`;
    return [key, { field: file, file, env, flag }];
  }),
);

/** Every flag `tidemark engine` accepts besides --config. */
export const ENGINE_FLAGS: readonly string[] = Object.values(ENV_AND_FLAG).map((s) => s.flag);

/** Every TIDEMARK_* variable the engine reads. */
export const ENGINE_ENV: readonly string[] = Object.values(ENV_AND_FLAG).flatMap((s) => s.env);
