/**
 * Pooling measured biases (docs/websocket-protocol.md, "Merging biases"; docs/decisions/0007-dashboard.md,
 * "An interval is never narrowed by combining"): the one function the dashboard server (engine workers'
 * dials, alert and SLO readings) and the browser app (services of a headline, nowcast errors, the
 * frontier) combine biases with. Pure and browser-safe: no node:*, no clock.
 */
import type { BiasSpread, PaneBias } from "./pane-bias.js";

const FIELDS = ["countPct", "errorRatePp", "p99Pct", "usersPct"] as const;
type Field = (typeof FIELDS)[number];

/** What pooling nothing gives: nothing measured, over no window. */
export const NO_BIAS: Readonly<PaneBias> = Object.freeze({
  countPct: null,
  errorRatePp: null,
  p99Pct: null,
  usersPct: null,
  windows: 0,
});

/**
 * The pooled bias of several measurements of one policy and stage. Each part is a mean over its
 * own last N closed windows of the same policy, so a field's pooled mean is the window-weighted
 * mean over the parts that measured it (as pooling their windows' raw values would give), and
 * `windows` is the largest N, not the sum. Parts with no window (or a null field) do not weigh in;
 * when no part has a window, the parts' values count alike (a provisional figure stays one).
 *
 * A field's 95 % half-width is the window-weighted mean of the parts' half-widths, as if their
 * errors were fully correlated: never narrower than any part measured. It is null when a weighing
 * part sent none; `spread` is absent when no part sent one (an older engine). `provisional` and
 * `scope: "policy"` stick when any part has them; `stage` and `age` stay only when all parts agree.
 * The order of the parts does not matter.
 */
export function poolBias(parts: readonly PaneBias[]): PaneBias {
  const first = parts[0];
  if (first === undefined) return { ...NO_BIAS };
  const out: PaneBias = {
    countPct: null,
    errorRatePp: null,
    p99Pct: null,
    usersPct: null,
    windows: Math.max(...parts.map((p) => p.windows)),
  };
  const withSpread = parts.some((p) => p.spread !== undefined);
  const spread = { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null } as BiasSpread;
  for (const f of FIELDS) {
    const pooled = poolField(parts, f);
    out[f] = pooled.mean;
    spread[f] = pooled.halfWidth;
  }
  if (withSpread) out.spread = spread;
  if (parts.every((p) => p.stage !== undefined && p.stage === first.stage)) out.stage = first.stage;
  if (parts.every((p) => p.age !== undefined && p.age === first.age)) out.age = first.age;
  if (parts.some((p) => p.scope !== undefined))
    out.scope = parts.some((p) => p.scope === "policy") ? "policy" : "service";
  if (parts.some((p) => p.provisional !== undefined)) out.provisional = parts.some((p) => p.provisional === true);
  return out;
}

/** One field's weighted mean and half-width over the parts that weigh in for it. */
function poolField(parts: readonly PaneBias[], f: Field): { mean: number | null; halfWidth: number | null } {
  const valued = parts.filter((p) => p[f] !== null);
  const measured = valued.filter((p) => p.windows > 0);
  const weighing = measured.length > 0 ? measured : valued;
  const weight = (p: PaneBias): number => (measured.length > 0 ? p.windows : 1);
  if (weighing.length === 0) return { mean: null, halfWidth: null };
  // One part weighing in is itself, exactly (v·w/w may differ from v in the last bit).
  if (weighing.length === 1) return { mean: weighing[0]?.[f] ?? null, halfWidth: weighing[0]?.spread?.[f] ?? null };
  let total = 0;
  let sum = 0;
  let spreadSum: number | null = 0;
  for (const p of weighing) {
    const w = weight(p);
    total += w;
    sum += (p[f] as number) * w;
    const h = p.spread?.[f] ?? null;
    spreadSum = spreadSum === null || h === null ? null : spreadSum + h * w;
  }
  return { mean: sum / total, halfWidth: spreadSum === null ? null : spreadSum / total };
}
