import type { PaneKind } from "@tidemark/engine/protocol";

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

/** "bias −1.5 pp (30 windows)", or why there is none yet. */
export function formatBias(bias: { value: number; unit: "%" | "pp" } | null, windows: number): string {
  if (bias === null) return windows > 0 ? "bias not measured for this metric" : "bias not measured yet";
  return `bias ${formatSigned(bias.value)} ${bias.unit} (${windows} ${windows === 1 ? "window" : "windows"})`;
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
