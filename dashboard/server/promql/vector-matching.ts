/**
 * Vector–vector operations as Prometheus 2.42 matches them (promql/engine.go VectorBinop,
 * VectorAnd/Or/Unless, resultMetric): signatures on all labels but `__name__` (less `ignoring`) or
 * on `on(…)`; one-to-one, group_left/group_right with labels copied from the "one" side, and
 * Prometheus's errors for many-to-many matches.
 */
import { DashboardError } from "../errors.js";
import { isComparison, type BinaryExpr, type VectorMatching } from "./ast.js";
import { apply, dropsName } from "./binary-op.js";
import { dropName, formatLabels, METRIC_NAME, pick, signature, signatureOf, type Labels } from "./labels.js";
import type { Sample } from "./values.js";

function execution(message: string): DashboardError {
  return new DashboardError("TM_PROMQL_EXECUTION", message);
}

/** The labels a match is made on. */
function matchedBy(m: VectorMatching): (name: string) => boolean {
  const { on, labels } = m;
  return on ? (n) => labels.includes(n) : (n) => n !== METRIC_NAME && !labels.includes(n);
}

/** Per operation, each label set's match signature (range queries ask for the same label sets at every step). */
const matchMemo = new WeakMap<BinaryExpr, WeakMap<Labels, string>>();

function matchSignature(e: BinaryExpr): (labels: Labels) => string {
  let memo = matchMemo.get(e);
  if (!memo) matchMemo.set(e, (memo = new WeakMap()));
  const m = memo;
  const matched = matchedBy(e.matching);
  return (labels) => {
    let sig = m.get(labels);
    if (sig === undefined) m.set(labels, (sig = signatureOf(labels, matched)));
    return sig;
  };
}

export function setOperation(e: BinaryExpr, lhs: readonly Sample[], rhs: readonly Sample[]): Sample[] {
  const sigOf = matchSignature(e);
  const sigs = (v: readonly Sample[]) => new Set(v.map((s) => sigOf(s.labels)));
  switch (e.op) {
    case "and": {
      if (lhs.length === 0 || rhs.length === 0) return [];
      const right = sigs(rhs);
      return lhs.filter((s) => right.has(sigOf(s.labels)));
    }
    case "or": {
      if (lhs.length === 0) return [...rhs];
      if (rhs.length === 0) return [...lhs];
      const left = sigs(lhs);
      return [...lhs, ...rhs.filter((s) => !left.has(sigOf(s.labels)))];
    }
    default: {
      if (lhs.length === 0 || rhs.length === 0) return [...lhs];
      const right = sigs(rhs);
      return lhs.filter((s) => !right.has(sigOf(s.labels)));
    }
  }
}

/** Arithmetic and comparisons between vectors: one-to-one, many-to-one or one-to-many. */
export function vectorBinop(e: BinaryExpr, lhsIn: readonly Sample[], rhsIn: readonly Sample[]): Sample[] {
  if (lhsIn.length === 0 || rhsIn.length === 0) return [];
  const m = e.matching;
  const swapped = m.card === "one-to-many";
  const [lhs, rhs] = swapped ? [rhsIn, lhsIn] : [lhsIn, rhsIn];
  const matched = matchedBy(m);
  const sigOf = matchSignature(e);
  const right = new Map<string, Sample>();
  for (const s of rhs) {
    const sig = sigOf(s.labels);
    const dup = right.get(sig);
    if (dup)
      throw execution(
        `found duplicate series for the match group ${formatLabels(pick(s.labels, matched))} on the ${swapped ? "left" : "right"} hand-side of the operation: [${formatLabels(s.labels)}, ${formatLabels(dup.labels)}];many-to-many matching not allowed: matching labels must be unique on one side`,
      );
    right.set(sig, s);
  }
  const matchedSigs = new Map<string, Set<string> | null>();
  const out: Sample[] = [];
  for (const ls of lhs) {
    const sig = sigOf(ls.labels);
    const rs = right.get(sig);
    if (!rs) continue;
    const [vl, vr] = swapped ? [rs.value, ls.value] : [ls.value, rs.value];
    let [value, keep] = apply(e.op, vl, vr);
    if (e.bool) [value, keep] = [Number(keep), true];
    if (!keep) continue;
    let labels = resultLabels(ls.labels, rs.labels, e);
    if (e.bool) labels = dropName(labels);
    const inserted = matchedSigs.get(sig);
    if (m.card === "one-to-one") {
      if (inserted !== undefined)
        throw execution("multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)");
      matchedSigs.set(sig, null);
    } else {
      const own = signature(labels);
      if (inserted?.has(own))
        throw execution("multiple matches for labels: grouping labels must ensure unique matches");
      if (inserted) inserted.add(own);
      else matchedSigs.set(sig, new Set([own]));
    }
    out.push({ labels, value });
  }
  return out;
}

const resultMemo = new WeakMap<BinaryExpr, WeakMap<Labels, WeakMap<Labels, Labels>>>();

/** resultMetric: the "many" (or left) side's labels, `__name__` dropped for arithmetic, kept to `on` or less `ignoring` one-to-one, group labels copied from the "one" side. */
function resultLabels(l: Labels, r: Labels, e: BinaryExpr): Labels {
  let memo = resultMemo.get(e);
  if (!memo) resultMemo.set(e, (memo = new WeakMap()));
  let byRight = memo.get(l);
  if (!byRight) memo.set(l, (byRight = new WeakMap()));
  const hit = byRight.get(r);
  if (hit) return hit;
  const m = e.matching;
  const drop = dropsName(e.op) && !isComparison(e.op);
  const out: Record<string, string> = { ...pick(l, (n) => !(drop && n === METRIC_NAME)) };
  if (m.card === "one-to-one")
    for (const n of Object.keys(out)) if (m.on ? !m.labels.includes(n) : m.labels.includes(n)) delete out[n];
  for (const n of m.include) {
    const v = r[n];
    if (v !== undefined && v !== "") out[n] = v;
    else delete out[n];
  }
  byRight.set(r, out);
  return out;
}
