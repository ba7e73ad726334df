/**
 * How the SLO panel writes the server's numbers (docs/slo.md, "Dashboard panel"): burn rates as
 * "14.2×", corrected ones with their interval "20.1× ± 1.9", the budget in % of the period's, the
 * bias in pp; four significant digits, as the SLO alerts' annotations.
 */
import type { SloView, SloWindowView } from "../../protocol/slos.js";

/** Four significant digits, no trailing zeros: 14.4, 0.2833, -15.87. */
export function sig(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : "–";
}

export function burnText(x: number): string {
  return `${sig(x)}×`;
}

export function correctedText(w: SloWindowView): string {
  return w.halfWidth === null ? `${sig(w.corrected)}× (provisional)` : `${sig(w.corrected)}× ± ${sig(w.halfWidth)}`;
}

export function biasText(w: SloWindowView): string {
  if (w.biasPp === null) return "not measured yet";
  return `${w.biasPp > 0 ? "+" : ""}${sig(w.biasPp)} pp`;
}

export function budgetText(b: SloView["budget"]): string {
  const pct = `${sig(100 * b.remaining)} %`;
  return b.halfWidth === null ? pct : `${pct} ± ${sig(100 * b.halfWidth)}`;
}

/** A log time as "2026-01-01 10:00Z". */
export function timeText(ms: number | null): string {
  if (ms === null) return "–";
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")}Z`;
}

export function objectiveText(o: number): string {
  return `${sig(100 * o)} %`;
}
