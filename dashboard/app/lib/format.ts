import type { PaneBias, PaneKind } from "@tidemark/engine/protocol";
import { formatDuration, formatNumber, formatSigned } from "../../protocol/number-text.js";

export { formatDuration, formatNumber, formatSigned };

/** The units a panel shows its values in. */
export type MetricUnit = "req/s" | "%" | "ms" | "users" | "sessions";

/** A value with its unit: "2.9 %", "412 ms", "1,234 req/s", "87 users". */
export function formatValue(unit: MetricUnit, v: number): string {
  if (!Number.isFinite(v)) return "–";
  if (unit === "ms" && Math.abs(v) >= 1000) return `${formatNumber(v / 1000)} s`;
  return `${formatNumber(v)} ${unit}`;
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
