import { poolBias, type BiasStage, type Pane, type PaneBias, type PaneKind } from "@tidemark/engine/protocol";
import type { SeriesPoint } from "./pane-book.js";

const SETTLEDNESS: Record<PaneKind, number> = { early: 0, retract: 1, "on-time": 2, late: 3, final: 4 };

/**
 * The pane kind a pane's bias is measured at (docs/architecture.md, glossary: "pane kind"): its
 * own `bias.stage` — the wire name of that kind, kept for the protocol — or for panes of older
 * engines its kind (a late pane may carry the final's bias when late is not measured).
 */
export function biasKindOf(p: Pane): BiasStage | "retract" {
  return p.bias.stage ?? p.kind;
}

/**
 * Pooling services for a headline (docs/websocket-protocol.md, "Pooling services"): several
 * services' panes of one window taken together in the browser when the engine sent no
 * all-services pane. What the pooled headline shows beside the value.
 */
export interface HeadlineFacts {
  bias: PaneBias;
  emitDelayMs: number;
  pipelineLagMs: number;
  /** The least settled kind among the panes (early if any is early). */
  kind: PaneKind;
}

/** Panes whose bias is of one kind only (`headlineWindow` picks them), so their biases may be pooled. */
export function headlineFacts(panes: readonly Pane[]): HeadlineFacts | null {
  const first = panes[0];
  if (!first) return null;
  let kind = first.kind;
  for (const p of panes) if (SETTLEDNESS[p.kind] < SETTLEDNESS[kind]) kind = p.kind;
  return {
    bias: poolBias(panes.map((p) => p.bias)),
    emitDelayMs: Math.max(...panes.map((p) => p.emitDelayMs)),
    pipelineLagMs: Math.max(...panes.map((p) => p.pipelineLagMs)),
    kind,
  };
}

/** The window a headline shows, and why it is not simply the newest one. */
export interface HeadlineWindow {
  t: number;
  panes: Pane[];
  /** The newest window's panes' biases are of several kinds, so this older window is shown instead. */
  newerMixed: boolean;
  /** Services of the window left out because their panes are of a later kind (no window was of one kind). */
  leftOut: number;
}

/**
 * The newest window whose panes (one per service) have their bias of one kind: services are pooled
 * only within one kind (docs/decisions/0007-dashboard.md, "A headline is the newest window").
 * When no window is, the newest window's panes of its least settled kind.
 */
export function headlineWindow(series: Map<string, SeriesPoint[]>): HeadlineWindow | null {
  const byWindow = new Map<number, Pane[]>();
  for (const s of series.values()) for (const p of s) getOrAdd(byWindow, p.t).push(p.pane);
  const starts = [...byWindow.keys()].sort((a, b) => b - a);
  const newest = starts[0];
  if (newest === undefined) return null;
  for (const t of starts) {
    const panes = byWindow.get(t) ?? [];
    if (new Set(panes.map(biasKindOf)).size === 1) return { t, panes, newerMixed: t !== newest, leftOut: 0 };
  }
  const all = byWindow.get(newest) ?? [];
  const leastSettled = all.reduce((a, p) => (SETTLEDNESS[p.kind] < SETTLEDNESS[a.kind] ? p : a));
  const panes = all.filter((p) => biasKindOf(p) === biasKindOf(leastSettled));
  return { t: newest, panes, newerMixed: false, leftOut: all.length - panes.length };
}

function getOrAdd<K, V>(m: Map<K, V[]>, k: K): V[] {
  let v = m.get(k);
  if (!v) m.set(k, (v = []));
  return v;
}
