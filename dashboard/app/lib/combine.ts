import type { Pane, PaneBias, PaneKind } from "@tidemark/engine/protocol";
import { mergeBias } from "../../protocol/bias.js";

const SETTLEDNESS: Record<PaneKind, number> = { early: 0, retract: 1, "on-time": 2, late: 3, final: 4 };

/** What a headline over several services' panes of one window shows beside the value. */
export interface HeadlineFacts {
  bias: PaneBias;
  emitDelayMs: number;
  pipelineLagMs: number;
  /** The least settled kind among the panes (early if any is early). */
  kind: PaneKind;
}

export function headlineFacts(panes: readonly Pane[]): HeadlineFacts | null {
  const first = panes[0];
  if (!first) return null;
  let kind = first.kind;
  for (const p of panes) if (SETTLEDNESS[p.kind] < SETTLEDNESS[kind]) kind = p.kind;
  return {
    bias: panes.slice(1).reduce((b, p) => mergeBias(b, p.bias), first.bias),
    emitDelayMs: Math.max(...panes.map((p) => p.emitDelayMs)),
    pipelineLagMs: Math.max(...panes.map((p) => p.pipelineLagMs)),
    kind,
  };
}
