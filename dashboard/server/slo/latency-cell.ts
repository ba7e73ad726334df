/**
 * A latency SLO's counts from one pane (docs/slo.md, "Latency SLI"): the bad events are the exact
 * count of requests slower than the threshold the engine keeps per pane (`latencyAbove`, keyed by
 * the threshold in ms as a decimal string); the ratio is corrected by the measured bias of the
 * pane's kind and age (latency-bias.ts), the count by the pane's nowcast as for the error SLI.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { kindAgeOf, type LatencyBias } from "./latency-bias.js";
import type { Cell } from "./slo-counts.js";

type WithLatency = { latencyAbove?: Readonly<Record<string, unknown>> };

/** The pane's exact count of requests slower than `ms`; undefined when the engine does not count that threshold. */
export function slowCount(pane: Pane, ms: number): number | undefined {
  // The field sits in the pane's value beside `count`; a pane-level one is read too.
  const counts = (pane.value as WithLatency).latencyAbove ?? (pane as WithLatency).latencyAbove;
  const n = counts?.[String(ms)];
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** What an SLO says when its panes carry no count for its threshold. */
export function missingThresholdText(ms: number): string {
  return `no exact latency counts for ${ms} ms in the panes: the engine must be restarted with this config`;
}

/**
 * The pane's cell, corrected by the bias measured so far; the pane's ratio then joins the bias
 * measurement. Undefined when the pane has no count for `ms`.
 */
export function latencyCellOf(
  pane: Pane,
  ms: number,
  bias: LatencyBias,
  settledBy: "final" | "on-time",
): Cell | undefined {
  const slow = slowCount(pane, ms);
  if (slow === undefined) return undefined;
  const count = pane.value.count;
  const ratio = count > 0 ? slow / count : null;
  const kindAge = kindAgeOf(pane);
  // The settling pane is the reference the other kinds are measured against: its own bias is 0 by construction.
  const settles = pane.kind === "final" || pane.kind === settledBy;
  const b = settles ? { meanPp: 0, spreadPp: 0 } : bias.at(kindAge);
  bias.saw(pane.window.end, kindAge, ratio, settles);
  const corrCount = pane.nowcast ? pane.nowcast.value.count : count;
  const corrRatio = ratio === null ? 0 : Math.min(1, Math.max(0, ratio - (b.meanPp ?? 0) / 100));
  const hw = b.meanPp === null || b.spreadPp === null ? null : b.spreadPp / 100;
  return {
    end: pane.window.end,
    seq: pane.seq,
    kind: pane.kind,
    emittedAt: pane.emittedAt,
    count,
    errors: slow,
    corrCount,
    corrErrors: corrCount * corrRatio,
    spreadWeight: hw === null ? 0 : corrCount * hw,
    unmeasured: hw === null ? corrCount : 0,
    biasWeight: b.meanPp === null ? 0 : count * b.meanPp,
    biasCount: b.meanPp === null ? 0 : count,
  };
}
