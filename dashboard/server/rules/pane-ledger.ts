/**
 * The newest pane of each (key, window) that alert rules read, for one policy and window size: its
 * kind, bias, emit delay and log time — what an alert states beside its value (docs/operations.md,
 * "Alerts"). Idempotent on (id, seq) like every sink; bounded to the recent windows.
 */
import type { Pane, PaneBias, PaneKind, PaneNowcast } from "@tidemark/engine/protocol";
import type { Labels, Matcher } from "../promql/index.js";
import { selectsKey } from "../prom/pane-samples.js";

export interface PaneFacts {
  readonly service: string;
  readonly route: string | undefined;
  readonly seq: number;
  readonly kind: PaneKind;
  readonly bias: PaneBias;
  readonly emitDelayMs: number;
  readonly pipelineLagMs: number;
  /** Log time at emission. */
  readonly emittedAt: number;
  /** The value corrected by the bias measured for its kind and age, when measured. */
  readonly nowcast: PaneNowcast | undefined;
}

export interface LedgerScope {
  readonly policy: string;
  readonly windowMs: number;
  /** Session panes (they have a key.user) rather than window panes. */
  readonly sessions: boolean;
}

export class PaneLedger {
  /** window end → key → facts */
  private readonly windows = new Map<number, Map<string, PaneFacts>>();
  private newest = -Infinity;
  private newestEmitted = -Infinity;

  /**
   * @param selects the series' matchers of every rule on this scope: only panes one of them selects are kept
   * @param keepMs windows ending this long before the newest are forgotten
   */
  constructor(
    readonly scope: LedgerScope,
    private readonly selects: ReadonlyArray<readonly Matcher[]>,
    private readonly keepMs: number,
  ) {}

  /** The newest window end seen in the scope (any key): the scope's clock. */
  get newestEnd(): number {
    return this.newest;
  }

  /** The newest log time at emission seen in the scope. */
  get newestEmittedAt(): number {
    return this.newestEmitted;
  }

  /** True when the pane is of this policy, window size and kind of pane. */
  covers(pane: Pane): boolean {
    const s = this.scope;
    return (
      pane.policy === s.policy &&
      pane.window.end - pane.window.start === s.windowMs &&
      (pane.key.user !== undefined) === s.sessions
    );
  }

  /** Takes a pane of the scope; returns its window end when a rule's series changed there. */
  apply(pane: Pane): number | undefined {
    const end = pane.window.end;
    if (end > this.newest) this.advance(end);
    if (pane.emittedAt > this.newestEmitted) this.newestEmitted = pane.emittedAt;
    if (end <= this.newest - this.keepMs || !this.selected(pane)) return undefined;
    const key = `${pane.key.service}\u0000${pane.key.route ?? "\u0001"}`;
    let w = this.windows.get(end);
    if (!w) this.windows.set(end, (w = new Map()));
    const held = w.get(key);
    if (held && held.seq >= pane.seq) return undefined;
    w.set(key, {
      service: pane.key.service,
      route: pane.key.route,
      seq: pane.seq,
      kind: pane.kind,
      bias: pane.bias,
      emitDelayMs: pane.emitDelayMs,
      pipelineLagMs: pane.pipelineLagMs,
      emittedAt: pane.emittedAt,
      nowcast: pane.nowcast,
    });
    return end;
  }

  /** Window ends held, ascending. */
  ends(): number[] {
    return [...this.windows.keys()].sort((a, b) => a - b);
  }

  /**
   * The facts behind a reading at window end t over `spanMs` (the window, or a rule's range):
   * the panes of windows ending in (t − spanMs, t] that the rule's own selectors read (`selects`:
   * another rule on the scope may keep other levels) and whose service and route agree with the
   * reading's labels. A reading without a route label takes service-level panes when there are.
   */
  factsFor(labels: Labels, t: number, spanMs: number, selects: ReadonlyArray<readonly Matcher[]>): PaneFacts[] {
    const service = labels["service"];
    const route = labels["route"];
    const read = (f: PaneFacts): boolean =>
      selects.some((m) => selectsKey(m, { ...this.scope, service: f.service, route: f.route }));
    const out: PaneFacts[] = [];
    for (const [end, w] of this.windows) {
      if (end <= t - spanMs || end > t) continue;
      for (const f of w.values())
        if ((service === undefined || f.service === service) && (route === undefined || f.route === route) && read(f))
          out.push(f);
    }
    if (route !== undefined || service === undefined) return out;
    const serviceLevel = out.filter((f) => f.route === undefined);
    return serviceLevel.length > 0 ? serviceLevel : out;
  }

  /** As the Prometheus API selects series: a metric of the pane's level (service, route, all services) names it. */
  private selected(pane: Pane): boolean {
    const key = { ...this.scope, service: pane.key.service, route: pane.key.route };
    return this.selects.some((m) => selectsKey(m, key));
  }

  private advance(end: number): void {
    this.newest = end;
    for (const e of this.windows.keys()) if (e <= end - this.keepMs) this.windows.delete(e);
  }
}
