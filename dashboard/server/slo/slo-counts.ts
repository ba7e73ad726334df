/**
 * The counts an SLO keeps per window (docs/slo.md, "Burn rates"): raw, nowcast-corrected and the
 * bias terms of the interval, added field by field. Shared by the cells (slo-cells.ts), the latency
 * cells (latency-cell.ts) and the budget ledger (budget-ledger.ts).
 */
import type { PaneKind } from "@tidemark/engine/protocol";

export interface Counts {
  count: number;
  errors: number;
  /** Nowcast counts: the policy's value corrected by the bias measured for its kind and age. */
  corrCount: number;
  corrErrors: number;
  /** Σ corrCount × error-rate half-width, over the cells whose interval is known. */
  spreadWeight: number;
  /** corrCount of the cells with no nowcast or no interval: their correction is unknown. */
  unmeasured: number;
  /** Σ count × measured error-rate bias (pp), over cells with a measured bias. */
  biasWeight: number;
  biasCount: number;
}

export interface Cell extends Counts {
  readonly end: number;
  readonly seq: number;
  readonly kind: PaneKind;
  readonly emittedAt: number;
}

export function zero(): Counts {
  return {
    count: 0,
    errors: 0,
    corrCount: 0,
    corrErrors: 0,
    spreadWeight: 0,
    unmeasured: 0,
    biasWeight: 0,
    biasCount: 0,
  };
}

const FIELDS = [
  "count",
  "errors",
  "corrCount",
  "corrErrors",
  "spreadWeight",
  "unmeasured",
  "biasWeight",
  "biasCount",
] as const;

/** to += sign × c, field by field. */
export function add(to: Counts, c: Counts, sign = 1): void {
  for (const f of FIELDS) to[f] += sign * c[f];
}
