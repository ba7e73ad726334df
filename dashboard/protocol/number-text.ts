/**
 * Numbers and durations as tidemark writes them for people — the dashboard's panels and the
 * alerts' annotations use the same words (docs/websocket-protocol.md, "Bias on screen"). Pure:
 * the server and the app share it.
 */

export const MINUS = "\u2212";

/** Significant digits that read well: 1234 → "1,234", 12.34 → "12.3", 0.1234 → "0.123"; "–" when not finite. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  const s = v.toLocaleString("en-US", { minimumFractionDigits: 0, maximumFractionDigits: digits });
  return s.replace("-", MINUS);
}

/** A signed number: "+1.5", "−1.5", "0". */
export function formatSigned(v: number): string {
  const s = formatNumber(Math.abs(v));
  if (s === "0") return "0";
  return `${v < 0 ? MINUS : "+"}${s}`;
}

/** A duration: "850 ms", "2 s", "1.5 s", "1 m 40 s"; "–" when unknown. */
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
