/**
 * Session windows (docs/semantics.md, "Session windows"): a pure operator with StreamCore's driving
 * interface that publishes per (policy, service, window) session cells as panes.
 */
export { DEFAULT_SESSION_CONFIG, validateSessionConfig, type SessionConfig } from "./session-config.js";
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
