/**
 * One pane series — (policy, key, window size) — as compact rows, one per window, ordered by start:
 * the values of the window's newest pane (a discarding policy's deltas added up), its kind, emit
 * delay and bias (docs/decisions/0011-prometheus-api.md, "Series from panes").
 */
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import { isAllServices } from "../../protocol/all-services.js";
import type { Level } from "./level.js";

/** Column of each field in a row. */
export const COL = {
  start: 0,
  seq: 1,
  count: 2,
  errors: 3,
  errorRate: 4,
  p50: 5,
  p90: 6,
  p95: 7,
  p99: 8,
  p999: 9,
  users: 10,
  emitDelayMs: 11,
  countPct: 12,
  errorRatePp: 13,
  p99Pct: 14,
  usersPct: 15,
  biasWindows: 16,
  /** Session panes: events of the sessions counted (0 for window panes). */
  events: 17,
} as const;
const STRIDE = 18;
const QUANTILES = [COL.p50, COL.p90, COL.p95, COL.p99, COL.p999] as const;

export const KINDS: readonly PaneKind[] = ["early", "on-time", "late", "final", "retract"];
export const RETRACT = KINDS.indexOf("retract");

/** All services ("*", docs/decisions/0030-all-services-panes-in-the-dashboard.md), a route, or a service. */
export function keyLevel(service: string, route: string | undefined): Level {
  if (isAllServices(service)) return "all";
  return route === undefined ? "service" : "route";
}

export class PaneSeries {
  private rows = new Float64Array(0);
  private kinds = new Uint8Array(0);
  private n = 0;
  /** Windows starting before this were forgotten; their panes are not taken again. */
  private floor = -Infinity;
  /** The key's level: which metric names the series is served under (docs/prometheus-api.md, "The data model"). */
  readonly level: Level;

  /**
   * @param keep windows kept; the series holds up to keep + keep/8 before dropping the oldest down to keep
   * @param discarding the policy sends deltas (discarding mode): a window's panes are added up
   */
  constructor(
    readonly policy: string,
    readonly service: string,
    readonly route: string | undefined,
    readonly windowMs: number,
    /** Session panes (docs/websocket-protocol.md, "Session panes"). */
    readonly sessions: boolean,
    private readonly keep: number,
    private readonly discarding: boolean,
  ) {
    this.level = keyLevel(service, route);
  }

  get length(): number {
    return this.n;
  }

  at(i: number, col: number): number {
    return this.rows[i * STRIDE + col] as number;
  }

  kind(i: number): number {
    return this.kinds[i] as number;
  }

  /** Sample time of row i: the window's end. */
  end(i: number): number {
    return this.at(i, COL.start) + this.windowMs;
  }

  /** Applies a pane unless its window is forgotten or a pane of its id with this seq or a later one was applied. Returns the change in rows. */
  apply(pane: Pane): number {
    const start = pane.window.start;
    if (start < this.floor) return 0;
    const at = this.lowerBound(start);
    if (at < this.n && this.at(at, COL.start) === start) {
      if (pane.seq <= this.at(at, COL.seq)) return 0;
      this.write(at, pane, this.discarding && pane.kind !== "retract" && this.kind(at) !== RETRACT);
      return 0;
    }
    this.insertAt(at);
    this.write(at, pane, false);
    return 1 - this.dropOverflow();
  }

  /** Forgets windows starting before `start`; returns how many. */
  forgetBefore(start: number): number {
    this.floor = Math.max(this.floor, start);
    const k = this.lowerBound(start);
    this.removeFirst(k);
    return k;
  }

  private write(i: number, pane: Pane, add: boolean): void {
    const o = i * STRIDE;
    const r = this.rows;
    const v = pane.value;
    if (add) {
      // Deltas: counts add up; distinct users and quantiles of a delta only bound the window's (upper bounds).
      r[o + COL.count] = (r[o + COL.count] as number) + v.count;
      r[o + COL.errors] = (r[o + COL.errors] as number) + v.errors;
      r[o + COL.users] = (r[o + COL.users] as number) + v.users;
      r[o + COL.events] = (r[o + COL.events] as number) + (pane.sessions?.events ?? 0);
      const quantiles = [v.p50, v.p90, v.p95, v.p99, v.p999];
      if (v.count > 0) QUANTILES.forEach((c, q) => (r[o + c] = Math.max(r[o + c] as number, quantiles[q] as number)));
      const count = r[o + COL.count] as number;
      r[o + COL.errorRate] = count === 0 ? 0 : (r[o + COL.errors] as number) / count;
    } else {
      r.set([v.count, v.errors, v.errorRate, v.p50, v.p90, v.p95, v.p99, v.p999, v.users], o + COL.count);
      r[o + COL.events] = pane.sessions?.events ?? 0;
    }
    r[o + COL.start] = pane.window.start;
    r[o + COL.seq] = pane.seq;
    r[o + COL.emitDelayMs] = pane.emitDelayMs;
    const b = pane.bias;
    r.set([b.countPct ?? NaN, b.errorRatePp ?? NaN, b.p99Pct ?? NaN, b.usersPct ?? NaN, b.windows], o + COL.countPct);
    this.kinds[i] = Math.max(0, KINDS.indexOf(pane.kind));
  }

  private insertAt(at: number): void {
    if (this.n === this.kinds.length) this.grow();
    this.rows.copyWithin((at + 1) * STRIDE, at * STRIDE, this.n * STRIDE);
    this.kinds.copyWithin(at + 1, at, this.n);
    this.n++;
  }

  private grow(): void {
    const cap = Math.min(Math.max(16, this.kinds.length * 2), this.keep + Math.max(1, this.keep >> 3) + 1);
    const rows = new Float64Array(cap * STRIDE);
    rows.set(this.rows.subarray(0, this.n * STRIDE));
    const kinds = new Uint8Array(cap);
    kinds.set(this.kinds.subarray(0, this.n));
    this.rows = rows;
    this.kinds = kinds;
  }

  /** Past keep + keep/8 windows, drops the oldest down to keep (amortized: one copy per keep/8 windows). */
  private dropOverflow(): number {
    if (this.n <= this.keep + (this.keep >> 3)) return 0;
    const k = this.n - this.keep;
    this.floor = Math.max(this.floor, this.at(k, COL.start));
    this.removeFirst(k);
    return k;
  }

  private removeFirst(k: number): void {
    if (k <= 0) return;
    this.rows.copyWithin(0, k * STRIDE, this.n * STRIDE);
    this.kinds.copyWithin(0, k, this.n);
    this.n -= k;
  }

  /** First row whose window starts at or after `start`. */
  lowerBound(start: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.at(mid, COL.start) < start) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
