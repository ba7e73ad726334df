import type { BiasSpread, PaneBias } from "@tidemark/engine/protocol";

const FIELDS = ["countPct", "errorRatePp", "p99Pct", "usersPct"] as const;
type Field = (typeof FIELDS)[number];

/**
 * Window-weighted mean of two measured biases of one stage (null = not measured). Used by the
 * server to merge engine workers and by the app to combine services. Both sides measure the same
 * policy over their own last N closed windows, so the result reports the larger N, not the sum.
 *
 * The interval half-width of the combination is the window-weighted mean of the two half-widths,
 * as if the two errors were fully correlated: never narrower than what either side measured
 * (docs/decisions/0007-dashboard.md, "An interval is never narrowed"). Either side without a
 * spread (an older engine) leaves the combination without one. The result is provisional when
 * either side is, policy-wide when either side is, and keeps the stage and age only when both
 * sides agree. Pure: the server and the app share it.
 */
export function mergeBias(a: PaneBias, b: PaneBias): PaneBias {
  const total = a.windows + b.windows;
  const weighted = (x: number | null, y: number | null, f: Field, pick: (s: PaneBias, f: Field) => number | null) => {
    if (a[f] === null || a.windows === 0) return pick(b, f);
    if (b[f] === null || b.windows === 0) return pick(a, f);
    if (x === null || y === null) return null;
    return (x * a.windows + y * b.windows) / total;
  };
  const out: PaneBias = {
    countPct: weighted(a.countPct, b.countPct, "countPct", meanOf),
    errorRatePp: weighted(a.errorRatePp, b.errorRatePp, "errorRatePp", meanOf),
    p99Pct: weighted(a.p99Pct, b.p99Pct, "p99Pct", meanOf),
    usersPct: weighted(a.usersPct, b.usersPct, "usersPct", meanOf),
    windows: Math.max(a.windows, b.windows),
  };
  if (a.spread !== undefined || b.spread !== undefined) {
    const spread = {} as BiasSpread;
    for (const f of FIELDS) spread[f] = weighted(spreadOf(a, f), spreadOf(b, f), f, spreadOf);
    out.spread = spread;
  }
  if (a.stage !== undefined && a.stage === b.stage) out.stage = a.stage;
  if (a.age !== undefined && a.age === b.age) out.age = a.age;
  if (a.scope !== undefined || b.scope !== undefined)
    out.scope = a.scope === "policy" || b.scope === "policy" ? "policy" : "service";
  if (a.provisional !== undefined || b.provisional !== undefined)
    out.provisional = a.provisional === true || b.provisional === true;
  return out;
}

const meanOf = (s: PaneBias, f: Field): number | null => s[f];
const spreadOf = (s: PaneBias, f: Field): number | null => s.spread?.[f] ?? null;
