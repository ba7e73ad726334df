/**
 * Derived per-service session metrics, fed by the session pane stream and retraction-aware
 * (docs/semantics.md, "Session windows"): per (policy, service, metrics window holding the
 * session's end) — sessions ended, sessions that saw an error, session duration quantiles (DDSketch
 * add/remove), distinct users. It is an upsert table keyed by pane id: a session's new pane
 * replaces its old contribution, a `retract` takes it out, so merges and late updates never count a
 * session twice. Values come out in the PaneValue shape: count = sessions, errors = error sessions,
 * errorRate = their share, p50…p999 = duration (ms), users = distinct users.
 */
import { DDSketch } from "@tidemark/sketches";
import type { Pane, PaneValue } from "../../protocol.js";
import type { AccumulationMode, PolicyConfig } from "../types.js";

export interface SessionMetricsOptions {
  /** Metrics window (ms): a session counts in the window holding its end. */
  windowMs: number;
  /** The policies whose panes are applied (their mode says whether counts are deltas; a policy not listed is read as full values). */
  policies: readonly Pick<PolicyConfig, "name" | "mode">[];
  relativeAccuracy?: number;
  /** Called whenever a cell's value changes (possibly several times per pane): a consumer republishes that cell. */
  onCell?: (policy: string, service: string, windowStart: number) => void;
}

export interface SessionMetricsRow {
  policy: string;
  service: string;
  window: { start: number; end: number };
  value: PaneValue;
}

interface SessionRecord {
  policy: string;
  service: string;
  user: string;
  end: number;
  durationMs: number;
  count: number;
  errors: number;
}

interface Cell {
  sessions: number;
  errorSessions: number;
  durations: DDSketch;
  users: Map<string, number>;
}

type Cells = Map<string, Map<string, Map<number, Cell>>>;

export class SessionMetrics {
  private readonly records = new Map<string, SessionRecord>();
  private readonly cells: Cells = new Map();
  private readonly modes = new Map<string, AccumulationMode>();

  constructor(private readonly options: SessionMetricsOptions) {
    for (const p of options.policies) this.modes.set(p.name, p.mode);
  }

  /** Applies one pane; returns false (and changes nothing) for a pane that is not a session pane. */
  apply(pane: Pane): boolean {
    const user = pane.key.user;
    if (user === undefined || pane.session === undefined) return false;
    const old = this.records.get(pane.id);
    if (old) this.contribute(old, -1);
    if (pane.kind === "retract") {
      this.records.delete(pane.id);
      return true;
    }
    const delta = this.modes.get(pane.policy) === "discarding" && old !== undefined;
    const rec: SessionRecord = {
      policy: pane.policy,
      service: pane.key.service,
      user,
      end: pane.window.end,
      durationMs: pane.session.durationMs,
      count: pane.value.count + (delta ? old.count : 0),
      errors: pane.value.errors + (delta ? old.errors : 0),
    };
    this.records.set(pane.id, rec);
    this.contribute(rec, 1);
    return true;
  }

  /** The derived value of one (policy, service, window start), or null when no session ends there. */
  value(policy: string, service: string, windowStart: number): PaneValue | null {
    const cell = this.cells.get(policy)?.get(service)?.get(windowStart);
    return cell ? valueOf(cell) : null;
  }

  /** Every non-empty cell, by policy, service, window start. */
  rows(): SessionMetricsRow[] {
    const out: SessionMetricsRow[] = [];
    for (const [policy, services] of this.cells) {
      for (const [service, windows] of services) {
        for (const [start, cell] of windows)
          out.push({ policy, service, window: { start, end: start + this.options.windowMs }, value: valueOf(cell) });
      }
    }
    return out.sort((a, b) => cmp(a.policy, b.policy) || cmp(a.service, b.service) || a.window.start - b.window.start);
  }

  /** Sessions currently held (one per live pane id). */
  get size(): number {
    return this.records.size;
  }

  /** Forgets sessions ending at or before t and the windows they fall in; returns how many. */
  evictBefore(t: number): number {
    let n = 0;
    for (const [id, rec] of this.records) {
      if (rec.end > t) continue;
      this.contribute(rec, -1);
      this.records.delete(id);
      n++;
    }
    return n;
  }

  private contribute(rec: SessionRecord, sign: 1 | -1): void {
    const w = this.options.windowMs;
    const start = Math.floor(rec.end / w) * w;
    let services = this.cells.get(rec.policy);
    if (services === undefined) this.cells.set(rec.policy, (services = new Map()));
    let windows = services.get(rec.service);
    if (windows === undefined) services.set(rec.service, (windows = new Map()));
    let cell = windows.get(start);
    if (cell === undefined) {
      const durations = new DDSketch({ relativeAccuracy: this.options.relativeAccuracy ?? 0.01 });
      windows.set(start, (cell = { sessions: 0, errorSessions: 0, durations, users: new Map() }));
    }
    cell.sessions += sign;
    if (rec.errors > 0) cell.errorSessions += sign;
    if (sign > 0) cell.durations.add(rec.durationMs);
    else cell.durations.remove(rec.durationMs);
    const users = (cell.users.get(rec.user) ?? 0) + sign;
    if (users === 0) cell.users.delete(rec.user);
    else cell.users.set(rec.user, users);
    if (cell.sessions === 0) windows.delete(start);
    this.options.onCell?.(rec.policy, rec.service, start);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function valueOf(c: Cell): PaneValue {
  const q = (p: number): number => (c.sessions === 0 ? 0 : c.durations.quantile(p));
  return {
    count: c.sessions,
    errors: c.errorSessions,
    errorRate: c.sessions === 0 ? 0 : c.errorSessions / c.sessions,
    p50: q(0.5),
    p90: q(0.9),
    p95: q(0.95),
    p99: q(0.99),
    p999: q(0.999),
    users: c.users.size,
  };
}
