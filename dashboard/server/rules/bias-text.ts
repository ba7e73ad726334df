/**
 * Numbers, durations and measured biases as an alert writes them — the same words as the app's
 * bias text (docs/websocket-protocol.md, "Bias on screen"): signed policy − reference in the
 * metric's unit, `−1.4 ± 0.3 pp, 30 win.`, `policy-wide`, `≥ … so far (provisional, …)`.
 */
import type { PaneBias } from "@tidemark/engine/protocol";
import { formatNumber, formatSigned } from "../../protocol/number-text.js";
import type { BiasField } from "../prom/metric-catalog.js";

/** A bias field's figure as shown: signed policy − reference (shortfalls negated), unit, half-width. */
export interface ShownBias {
  readonly value: number;
  readonly unit: "%" | "pp";
  readonly spread: number | null;
}

const WHAT: Record<BiasField, string> = {
  countPct: "count",
  errorRatePp: "error ratio",
  p99Pct: "p99 latency",
  usersPct: "distinct users",
};

/** A sample value, four significant digits, as Prometheus-style plain text: "0.08333", "1250". */
export function formatSample(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v);
}

/** The bias field as the app shows it, or null when not measured. */
export function shownBias(b: PaneBias, field: BiasField): ShownBias | null {
  const v = b[field];
  if (v === null) return null;
  const shortfall = field === "countPct" || field === "usersPct";
  return { value: shortfall ? -v : v, unit: field === "errorRatePp" ? "pp" : "%", spread: b.spread?.[field] ?? null };
}

/** "−1.4 ± 0.3 pp" (the figure alone). */
export function figure(shown: ShownBias): string {
  const interval = shown.spread === null ? "" : ` \u00b1 ${formatNumber(shown.spread)}`;
  return `${formatSigned(shown.value)}${interval} ${shown.unit}`;
}

/**
 * The bias annotation: "error ratio −1.4 ± 0.3 pp, 30 win., measured on on-time panes for this
 * service"; provisional, policy-wide and unmeasured biases say so.
 */
export function biasText(b: PaneBias, field: BiasField | undefined): string {
  if (field === undefined) return "not measured for this metric";
  const shown = shownBias(b, field);
  if (shown === null) return `${WHAT[field]}: not measured yet`;
  const n = b.windows > 0 ? `${b.windows} win.` : "";
  const wide = b.scope === "policy";
  const where = [
    // `stage` is the wire name of the pane kind the bias is measured at (docs/architecture.md, glossary).
    b.stage ? `measured on ${b.stage} panes${b.age ? ` (age ${b.age})` : ""}` : "",
    b.scope === "service" ? "for this service" : wide ? "policy-wide (this service has no sample yet)" : "",
  ]
    .filter((x) => x !== "")
    .join(" ");
  if (b.provisional === true) {
    const dir = shown.value < 0 ? " under" : shown.value > 0 ? " over" : "";
    const notes = ["provisional", n].filter((x) => x !== "").join(", ");
    return `${WHAT[field]} \u2265 ${formatNumber(Math.abs(shown.value))} ${shown.unit}${dir} so far (${notes})${where ? `, ${where}` : ""}`;
  }
  return `${WHAT[field]} ${figure(shown)}${n ? `, ${n}` : ""}${where ? `, ${where}` : ""}`;
}
