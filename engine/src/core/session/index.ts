/**
 * Session windows (docs/semantics.md, "Session windows"): a pure operator with StreamCore's driving
 * interface, and the retraction-aware derived metrics fed by its panes. See docs/semantics.md
 * "Session windows".
 */
export { DEFAULT_SESSION_CONFIG, validateSessionConfig, type SessionConfig } from "./session-config.js";
export { SessionMetrics, type SessionMetricsOptions, type SessionMetricsRow } from "./session-metrics.js";
export { SESSION_SNAPSHOT_VERSION } from "./session-snapshot.js";
export type { SessionStatus } from "./session-status.js";
export { createSessionOperator, restoreSessionOperator, type SessionCore } from "./create-session-operator.js";
export {
  withSessions,
  isWithSessionsSnapshot,
  WITH_SESSIONS_SNAPSHOT_VERSION,
  type CoreWithSessions,
  type CoreWithSessionsStatus,
} from "./with-sessions.js";
