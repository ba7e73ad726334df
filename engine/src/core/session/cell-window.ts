/**
 * Session cells (docs/semantics.md, "Session windows"): what the session operator publishes. A cell
 * is one policy's sessions of one service that ended in one tumbling window — sessions ended,
 * sessions with an error, their events, their durations (a DDSketch with exact removal, so a
 * session that moves or joins another leaves no trace behind). A CellWindow holds every cell of one
 * (window size, start): per service one cell per policy, the hidden reference last, and per policy
 * its kind bits (on-time, final, late pane pending) as the window core keeps it for windows.
 */
import { DDSketch } from "@tidemark/sketches";
import type { PaneValue } from "../../protocol.js";
import type { BiasPoint } from "../dial/bias.js";
import type { KindPoints } from "../panes/kind-points.js";

export interface SessionCell {
  readonly window: CellWindow;
  readonly service: string;
  readonly policy: number;
  /** Sessions counted here. */
  count: number;
  /** Of them, sessions with a failed event. */
  errors: number;
  /** Events of those sessions. */
  events: number;
  /** Session durations (last event − first event, ms). */
  readonly durations: DDSketch;
  /** Events the policy accepted late into sessions counted here. */
  lateAccepted: number;
  /** Next pane seq of the cell. */
  seq: number;
  /** Changed since its last pane. */
  changed: boolean;
  /** In its policy's early queue. */
  queued: boolean;
  /** Changed since its on-time pane and not shown by a late pane yet. */
  lateDirty: boolean;
  /** The full value of its last pane (what a retraction takes back, what discarding deltas start from); null: none yet. */
  last: PaneValue | null;
  lastEvents: number;
  /** Kind slot of the last pane (kind-slot.ts): a retraction carries that kind's bias. */
  lastSlot: number;
  /** What each pane kind showed, for the bias the reference measures (kind-points.ts); null: nothing yet. */
  points: KindPoints | null;
}

export interface CellWindow {
  /** Index of the window size (the session operator's `sizes`). */
  readonly size: number;
  readonly start: number;
  readonly end: number;
  /** Per policy, the reference last: KIND_* bits of window-state.ts. */
  readonly kinds: Uint8Array;
  /** Per policy: log time of its last late pane. */
  readonly lastLateAt: Float64Array;
  /** Service → its cells, one per policy (the reference last), created with their first session. */
  readonly services: Map<string, (SessionCell | undefined)[]>;
  /** Policies (and the reference) whose final is out. */
  closed: number;
  /** The reference's values per service once it closed the window (what bias is measured against), else null. */
  ref: Map<string, BiasPoint> | null;
}

export function newCellWindow(size: number, start: number, sizeMs: number, policies: number): CellWindow {
  return {
    size,
    start,
    end: start + sizeMs,
    kinds: new Uint8Array(policies),
    lastLateAt: new Float64Array(policies).fill(-Infinity),
    services: new Map(),
    closed: 0,
    ref: null,
  };
}

export function newCell(window: CellWindow, service: string, policy: number, relativeAccuracy: number): SessionCell {
  return {
    window,
    service,
    policy,
    count: 0,
    errors: 0,
    events: 0,
    durations: new DDSketch({ relativeAccuracy }),
    lateAccepted: 0,
    seq: 0,
    changed: false,
    queued: false,
    lateDirty: false,
    last: null,
    lastEvents: 0,
    lastSlot: -1,
    points: null,
  };
}

/** Adds (sign 1) or takes back (sign −1) one session. */
export function applySession(c: SessionCell, sign: 1 | -1, durationMs: number, events: number, error: boolean): void {
  c.count += sign;
  c.events += sign * events;
  if (error) c.errors += sign;
  if (sign > 0) c.durations.add(durationMs);
  else c.durations.remove(durationMs);
  c.changed = true;
}

const QUANTILES = [0.5, 0.9, 0.95, 0.99, 0.999];

/** The cell's whole value: sessions, error sessions and their share, duration quantiles; users are not measured (0). */
export function cellValue(c: SessionCell): PaneValue {
  const q = c.count > 0 ? c.durations.quantiles(QUANTILES) : [0, 0, 0, 0, 0];
  return {
    count: c.count,
    errors: c.errors,
    errorRate: c.count === 0 ? 0 : c.errors / c.count,
    p50: q[0] as number,
    p90: q[1] as number,
    p95: q[2] as number,
    p99: q[3] as number,
    p999: q[4] as number,
    users: 0,
  };
}
