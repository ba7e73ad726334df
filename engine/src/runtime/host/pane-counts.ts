/**
 * PaneCounts: the panes an operator emitted, by policy and kind (tidemark_*_panes_emitted_total,
 * docs/operations.md, "Metrics"). Counted by the OperatorHost for every operator alike.
 */
import type { Pane } from "../../protocol.js";

export class PaneCounts {
  /** policy → kind → panes. */
  readonly byPolicy = new Map<string, Map<string, number>>();

  count(p: Pane): void {
    let kinds = this.byPolicy.get(p.policy);
    if (!kinds) this.byPolicy.set(p.policy, (kinds = new Map()));
    kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + 1);
  }
}
