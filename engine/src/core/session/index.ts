/**
 * core/session — session windows (docs/semantics.md, "Session windows";
 * docs/decisions/0034-sessions-at-scale.md): a pure operator with StreamCore's driving interface
 * that publishes per (policy, service, window) session cells as panes.
 *
 * Owns: the session store (slots, keys, the timers' calendar queues), placing events into sessions and joining
 * sessions an event bridges, the cells counted per policy, their panes and measured bias, the
 * operator's snapshot, and `withSessions` (the window core and this operator as one StreamCore).
 *
 * May import: protocol, every other folder of core/ (it composes an InputDriver and reuses the
 * panes, dial and snapshot pieces). No I/O, no clock, no env.
 *
 * Invariants: a session per (service, user) key and policy; the store is bounded by `maxKeys`
 * (what it refuses is counted); the same inputs give the same cells and panes, live or restored.
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
