/**
 * A rule read at one window end: the compared vector's series there, each with the facts of the
 * panes behind it (kind, bias, emit delay, log time) and whether it crosses the threshold.
 */
import { poolBias, type PaneBias, type PaneKind } from "@tidemark/engine/protocol";
import { evaluateInstant, METRIC_NAME, signature, type Labels, type Queryable } from "../promql/index.js";
import { judgesOnNowcast, nowcastOf, type Nowcast } from "./nowcast-judge.js";
import type { PaneFacts, PaneLedger } from "./pane-ledger.js";
import { holds, type RuleShape } from "./rule-shape.js";
import type { Verdict } from "./series-alert.js";

export interface Reading extends Verdict {
  /** The series' labels without `__name__` and `pane_kind`. */
  readonly labels: Labels;
  readonly signature: string;
  readonly value: number;
  /** The least settled kind of the panes behind it. */
  readonly kind: PaneKind;
  /** Their measured bias (several panes: pooled as the app pools services). */
  readonly bias: PaneBias;
  readonly emitDelayMs: number;
  readonly pipelineLagMs: number;
  /** An early reading judged on the pane's corrected value (what `crossed` says), when measured. */
  readonly nowcast: Nowcast | null;
  /** An early reading of a rule that judges on the nowcast, with none measured yet: judged raw. */
  readonly provisional: boolean;
}

/** From least to most settled: a reading is as settled as its least settled pane. */
const ORDER: readonly PaneKind[] = ["retract", "early", "on-time", "late", "final"];

/**
 * Evaluates the rule's vector at window end t (an instant selector there sees exactly the window
 * ending at t: the lookback is the window). Series with no pane facts are skipped.
 */
export function readRule(shape: RuleShape, source: Queryable, ledger: PaneLedger, t: number): Reading[] {
  const v = evaluateInstant(shape.vector, source, t, { lookbackMs: 1 });
  if (v.type !== "vector") return [];
  const span = Math.max(shape.windowMs, shape.rangeMs);
  const out: Reading[] = [];
  const seen = new Set<string>();
  for (const s of v.samples) {
    const labels = identity(s.labels);
    const sig = signature(labels);
    if (seen.has(sig)) continue;
    const facts = ledger.factsFor(labels, t, span, shape.selects);
    if (facts.length === 0) continue;
    seen.add(sig);
    const kind = leastSettled(facts);
    const early = kind === "early" && facts.length === 1 && judgesOnNowcast(shape);
    const nowcast = early ? nowcastOf(shape, facts[0]?.nowcast) : null;
    out.push({
      end: t,
      labels,
      signature: sig,
      value: s.value,
      crossed: holds(shape.op, nowcast ? nowcast.value : s.value, shape.threshold),
      kind,
      settled: kind === "on-time" || kind === "late" || kind === "final",
      at: Math.max(...facts.map((f) => f.emittedAt)),
      bias: poolBias(facts.map((f) => f.bias)),
      emitDelayMs: Math.max(...facts.map((f) => f.emitDelayMs)),
      pipelineLagMs: Math.max(...facts.map((f) => f.pipelineLagMs)),
      nowcast,
      provisional: early && nowcast === null,
    });
  }
  return out;
}

function identity(labels: Labels): Labels {
  if (!(METRIC_NAME in labels) && !("pane_kind" in labels)) return labels;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (k !== METRIC_NAME && k !== "pane_kind") out[k] = v;
  return out;
}

function leastSettled(facts: readonly PaneFacts[]): PaneKind {
  let best = ORDER.length - 1;
  for (const f of facts) best = Math.min(best, ORDER.indexOf(f.kind));
  return ORDER[best] as PaneKind;
}
