/**
 * Session panes (docs/decisions/0009-session-windows.md) folded into per-service session metrics
 * for the Sessions panel: one `SessionMetrics` (the core's retraction-aware fold) per window size
 * the app offers. Session panes never enter the pane store (one series per session would grow it);
 * instead each cell a session pane changes — (policy, service, window holding the session's end) —
 * is republished as one derived pane, stored and fanned out like any other:
 *
 *   id `<policy>|sessions:<service>|<windowMs>|<start>`, key `{ service, user: "*" }`,
 *   value: count = sessions ended, errors = sessions with an error, errorRate = their share,
 *   p50…p999 = session duration (ms), users = distinct users;
 *   bias, emit delay, watermark, lag: those of the session pane that changed it (the policy's).
 *
 * `key.user` is what tells a derived session pane from a window pane (window panes have none).
 */
import { SessionMetrics } from "@tidemark/engine/core";
import type { Pane, PaneKind, PaneValue } from "@tidemark/engine/protocol";

/** The user of every derived session pane: all users of the service. */
export const ALL_USERS = "*";
/** Window sizes of the derived metrics: the app's window choices. */
export const SESSION_WINDOWS_MS: readonly number[] = [10_000, 60_000];
/** Session panes between two evictions of sessions older than the kept windows. */
const EVICT_EVERY = 1024;

const EMPTY: PaneValue = { count: 0, errors: 0, errorRate: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, users: 0 };

interface Book {
  windowMs: number;
  metrics: SessionMetrics;
  /** Cells changed by the pane being applied: service, window start (pairs). */
  touched: Array<string | number>;
}

export function isSessionMetricsPane(p: Pane): boolean {
  return p.key.user !== undefined;
}

export class SessionBook {
  private readonly books: Book[];
  private seq = 0;
  private newestEnd = -Infinity;
  private applied = 0;
  private muted = false;

  /**
   * @param keepWindows windows kept per (policy, service) series, as the pane store keeps them
   * @param discarding policies whose session panes carry deltas (discarding mode)
   */
  constructor(
    private readonly keepWindows: number,
    discarding: readonly string[] = [],
    windowsMs: readonly number[] = SESSION_WINDOWS_MS,
  ) {
    const policies = discarding.map((name) => ({ name, mode: "discarding" as const }));
    this.books = windowsMs.map((windowMs) => {
      const touched: Array<string | number> = [];
      const onCell = (_policy: string, service: string, start: number): void => {
        if (this.muted) return;
        for (let i = 0; i < touched.length; i += 2) if (touched[i] === service && touched[i + 1] === start) return;
        touched.push(service, start);
      };
      // Policies not listed are read as full values: right for every mode but discarding.
      return { windowMs, touched, metrics: new SessionMetrics({ windowMs, policies, onCell }) };
    });
  }

  /** Sessions held (one per live session pane id), in the first window size's book. */
  get size(): number {
    return this.books[0]?.metrics.size ?? 0;
  }

  /** Applies a session pane; returns the derived panes whose values it changed. */
  apply(pane: Pane): Pane[] {
    const out: Pane[] = [];
    for (const b of this.books) {
      b.touched.length = 0;
      b.metrics.apply(pane);
      for (let i = 0; i < b.touched.length; i += 2)
        out.push(this.derived(pane, b, b.touched[i] as string, b.touched[i + 1] as number));
    }
    if (pane.window.end > this.newestEnd) this.newestEnd = pane.window.end;
    if (++this.applied % EVICT_EVERY === 0) this.evict();
    return out;
  }

  private derived(trigger: Pane, b: Book, service: string, start: number): Pane {
    const kind: PaneKind = trigger.kind === "early" ? "early" : "on-time";
    return {
      id: `${trigger.policy}|sessions:${encodeURIComponent(service)}|${b.windowMs}|${start}`,
      seq: ++this.seq,
      kind,
      policy: trigger.policy,
      key: { service, user: ALL_USERS },
      window: { start, end: start + b.windowMs },
      value: b.metrics.value(trigger.policy, service, start) ?? EMPTY,
      watermark: trigger.watermark,
      emittedAt: trigger.emittedAt,
      emitDelayMs: trigger.emitDelayMs,
      pipelineLagMs: trigger.pipelineLagMs,
      lateAccepted: trigger.lateAccepted,
      dropped: trigger.dropped,
      bias: trigger.bias,
    };
  }

  /** Forgets sessions ending before the windows the store still keeps (their panes are gone). */
  private evict(): void {
    this.muted = true;
    for (const b of this.books) b.metrics.evictBefore(this.newestEnd - this.keepWindows * b.windowMs);
    this.muted = false;
  }
}
