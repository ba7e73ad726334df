/**
 * The session store on a worker's /metrics (docs/operations.md, "Metrics"): keys held against
 * their cap, rows, bytes, and the events of new keys refused past the cap — an explosion of users
 * is counted and shown, never met by memory (docs/decisions/0034-sessions-at-scale.md). All zero
 * with sessions off.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { SessionStatus } from "../../core/index.js";
import type { CoreStatus } from "../../core/types.js";

/** The session operator's part of a core's status, if it runs one. */
export function sessionsOf(status: CoreStatus): SessionStatus | undefined {
  return (status as CoreStatus & { sessions?: SessionStatus }).sessions;
}

export function registerSessionGauges(r: Registry, prefix: string, status: () => CoreStatus): void {
  const registers = [r];
  const gauge = (name: string, help: string, read: (s: SessionStatus) => number): void => {
    new Gauge({
      name: `${prefix}${name}`,
      help,
      registers,
      collect() {
        const s = sessionsOf(status());
        this.set(s === undefined ? 0 : read(s));
      },
    });
  };
  gauge("session_keys", "(service, user) keys the session store holds.", (s) => s.sessionKeys);
  gauge(
    "session_keys_limit",
    "The cap on session keys (sessions.maxKeys); 0 with sessions off.",
    (s) => s.maxSessionKeys,
  );
  gauge(
    "session_rows",
    "Session rows held (each shared by the policies that see the same session).",
    (s) => s.sessionRows,
  );
  gauge(
    "session_state_bytes",
    "Bytes of the session store: typed arrays and timer queues exactly, users' strings estimated.",
    (s) => s.stateBytes,
  );
  new Counter({
    name: `${prefix}session_overflow_events_total`,
    help: "Events of new (service, user) keys past sessions.maxKeys: counted, not sessionized.",
    registers,
    collect() {
      this.reset();
      this.inc(sessionsOf(status())?.overflowEvents ?? 0);
    },
  });
}
