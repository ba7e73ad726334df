import type { PaneBias, PaneKind } from "@tidemark/engine/protocol";

const MINUS = "\u2212";

/** The units a panel shows its values in. */
export type MetricUnit = "req/s" | "%" | "ms" | "users" | "sessions";

/** Significant digits that read well on a dashboard: 1234 → "1,234", 12.34 → "12.3", 0.1234 → "0.123". */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  const s = v.toLocaleString("en-US", { minimumFractionDigits: 0, maximumFractionDigits: digits });
  return s.replace("-", MINUS);
}

/** A value with its unit: "2.9 %", "412 ms", "1,234 req/s", "87 users". */
export function formatValue(unit: MetricUnit, v: number): string {
  if (!Number.isFinite(v)) return "–";
  if (unit === "ms" && Math.abs(v) >= 1000) return `${formatNumber(v / 1000)} s`;
  return `${formatNumber(v)} ${unit}`;
}

/** A signed number: "+1.5", "−1.5", "0". */
export function formatSigned(v: number): string {
  const s = formatNumber(Math.abs(v));
  if (s === "0") return "0";
  return `${v < 0 ? MINUS : "+"}${s}`;
}

/** A measured bias in a panel's unit: signed policy − reference, and its 95 % interval half-width. */
export interface ShownBias {
  value: number;
  unit: "%" | "pp";
  /** Null: fewer than two samples, or an engine that sends no spread. */
  spread: number | null;
}

/** What a bias text says besides its number (docs/websocket-protocol.md, "Bias on screen"). */
export type BiasContext = Pick<PaneBias, "windows" | "provisional" | "scope">;

/**
 * A pane's bias with its interval: "−1.4 ± 0.3 pp, 30 win."; "+0.2 pp, 1 win." without a spread;
 * "−0.33 ± 0.1 pp, 30 win., policy-wide" when measured over the policy, not the service;
 * "≥ 0.8 % under so far (provisional, 3 win.)" before the reference closed a window (a lower bound);
 * or why there is none.
 */
export function formatBias(shown: ShownBias | null, b: BiasContext): string {
  if (shown === null) return b.windows > 0 ? "not measured for this metric" : "not measured yet";
  const wide = b.scope === "policy";
  const n = b.windows > 0 ? `${b.windows} win.` : "";
  if (b.provisional === true) {
    const dir = shown.value < 0 ? " under" : shown.value > 0 ? " over" : "";
    const notes = ["provisional", n, wide ? "policy-wide" : ""].filter((x) => x !== "").join(", ");
    return `\u2265 ${formatNumber(Math.abs(shown.value))} ${shown.unit}${dir} so far (${notes})`;
  }
  const interval = shown.spread === null ? "" : ` \u00b1 ${formatNumber(shown.spread)}`;
  return `${formatSigned(shown.value)}${interval} ${shown.unit}${n ? `, ${n}` : ""}${wide ? ", policy-wide" : ""}`;
}

/** A duration: "850 ms", "2 s", "1.5 s", "1 m 40 s". */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  const a = Math.abs(ms);
  const sign = ms < 0 ? MINUS : "";
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${formatNumber(a / 1000)} s`;
  const m = Math.floor(a / 60_000);
  const s = Math.round((a % 60_000) / 1000);
  return `${sign}${m} m${s > 0 ? ` ${s} s` : ""}`;
}

/** "emit 2 s + 40 ms pipeline": what the policy costs plus the measured pipeline lag. */
export function formatEmitDelay(emitDelayMs: number | null, pipelineLagMs: number | null): string {
  return `emit ${formatDuration(emitDelayMs)} + ${formatDuration(pipelineLagMs)} pipeline`;
}

export const KIND_LABEL: Record<PaneKind, string> = {
  early: "early",
  "on-time": "on-time",
  late: "late",
  final: "final",
  retract: "retracted",
};

/** Early values are provisional: later panes of the same window replace them. */
export function isProvisional(kind: PaneKind): boolean {
  return kind === "early" || kind === "retract";
}
