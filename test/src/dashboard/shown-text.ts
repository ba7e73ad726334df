/**
 * Reads numbers back from what the dashboard shows, so the browser tests compare against panes
 * without reusing the app's formatting code.
 */
import type { PaneBias } from "@tidemark/engine/protocol";

const MINUS = "\u2212";

/** "1,234 req/s" → 1234, "−1.5" → -1.5. */
export function shownNumber(text: string): number {
  const m = /[+\u2212-]?[\d,]+(?:\.\d+)?/.exec(text);
  if (!m) throw new Error(`no number in "${text}"`);
  return Number(m[0].replaceAll(",", "").replace(MINUS, "-").replace("+", ""));
}

/** "850 ms" → 850, "2 s" → 2000, "1.5 s" → 1500, "10 m 3 s" → 603000, "2 m" → 120000. */
export function shownDuration(text: string): number {
  const t = text.trim();
  const neg = t.startsWith(MINUS) ? -1 : 1;
  const body = t.replace(MINUS, "");
  let m = /^(\d+) m(?: (\d+) s)?$/.exec(body);
  if (m) return neg * (Number(m[1]) * 60_000 + Number(m[2] ?? 0) * 1000);
  m = /^([\d.]+) s$/.exec(body);
  if (m) return neg * Number(m[1]) * 1000;
  m = /^(\d+) ms$/.exec(body);
  if (m) return neg * Number(m[1]);
  throw new Error(`not a shown duration: "${text}"`);
}

/** "emit 2 s + 40 ms pipeline" → { emitMs: 2000, pipelineMs: 40 }. */
export function shownDelay(text: string): { emitMs: number; pipelineMs: number } {
  const m = /^emit (.+) \+ (.+) pipeline$/.exec(text.trim());
  if (!m) throw new Error(`not an emit delay: "${text}"`);
  return { emitMs: shownDuration(m[1] ?? ""), pipelineMs: shownDuration(m[2] ?? "") };
}

/** What a shown bias says, read back. */
export interface ShownBiasText {
  value: number;
  unit: string;
  windows: number;
  /** The interval half-width; null when none is shown. */
  spread: number | null;
  provisional: boolean;
  policyWide: boolean;
}

/**
 * "bias −6.4 ± 0.3 %, 30 win." → { value: -6.4, spread: 0.3, windows: 30, … } (", policy-wide" and
 * "bias ≥ 0.8 % under so far (provisional, 3 win.)" too); null for "bias not measured …".
 */
export function shownBias(text: string): ShownBiasText | null {
  const t = text.trim();
  if (/not measured/.test(t)) return null;
  const prov =
    /^bias \u2265 (\S+) (%|pp)(?: (under|over))? so far \(provisional(?:, (\d+) win\.)?(, policy-wide)?\)$/.exec(t);
  if (prov) {
    const magnitude = shownNumber(prov[1] ?? "");
    return {
      value: prov[3] === "under" ? -magnitude : magnitude,
      unit: prov[2] ?? "",
      windows: Number(prov[4] ?? 0),
      spread: null,
      provisional: true,
      policyWide: prov[5] !== undefined,
    };
  }
  const m = /^bias (\S+)(?: \u00b1 (\S+))? (%|pp)(?:, (\d+) win\.)?(, policy-wide)?$/.exec(t);
  if (!m) throw new Error(`not a bias: "${text}"`);
  return {
    value: shownNumber(m[1] ?? ""),
    unit: m[3] ?? "",
    windows: Number(m[4] ?? 0),
    spread: m[2] === undefined ? null : shownNumber(m[2]),
    provisional: false,
    policyWide: m[5] !== undefined,
  };
}

/** True when `shown` is `expected` rounded to what a 3-significant-digit display keeps. */
export function closeTo(shown: number, expected: number): boolean {
  return Math.abs(shown - expected) <= Math.max(0.005 * Math.abs(expected), 0.0051);
}

/*
 * The display rules, restated here (not imported from the app) so a page can be compared with the
 * exact text a pane's numbers must produce: numbers keep 0 decimals from 100, 1 from 10, 2 from 1
 * and 3 below, with en-US grouping; signs are "+" and a true minus (U+2212); zero is "0".
 */
function displayed(v: number): string {
  const a = Math.abs(v);
  const decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  const text = new Intl.NumberFormat("en-US", { maximumFractionDigits: decimals }).format(a);
  return v < 0 && text !== "0" ? MINUS + text : text;
}

/** The extras of a pane's bias for one field, as `expectedBias` takes them. */
export function biasExtras(
  b: PaneBias,
  field: "countPct" | "errorRatePp" | "p99Pct" | "usersPct",
): { spread: number | null; provisional: boolean; policyWide: boolean } {
  return { spread: b.spread?.[field] ?? null, provisional: b.provisional === true, policyWide: b.scope === "policy" };
}

/**
 * The text of a measured bias: "bias −6.4 %, 30 win.", "bias +0.12 ± 0.05 pp, 1 win., policy-wide",
 * "bias ≥ 0.8 % under so far (provisional, 3 win.)".
 */
export function expectedBias(
  value: number,
  unit: "%" | "pp",
  windows: number,
  extras: { spread?: number | null; provisional?: boolean; policyWide?: boolean } = {},
): string {
  const n = windows > 0 ? `${windows} win.` : "";
  if (extras.provisional) {
    const dir = value < 0 ? " under" : value > 0 ? " over" : "";
    const notes = ["provisional", n, extras.policyWide ? "policy-wide" : ""].filter((x) => x !== "").join(", ");
    return `bias \u2265 ${displayed(Math.abs(value))} ${unit}${dir} so far (${notes})`;
  }
  const magnitude = displayed(Math.abs(value));
  const signed = magnitude === "0" ? "0" : `${value < 0 ? MINUS : "+"}${magnitude}`;
  const interval = extras.spread === null || extras.spread === undefined ? "" : ` \u00b1 ${displayed(extras.spread)}`;
  return `bias ${signed}${interval} ${unit}${n ? `, ${n}` : ""}${extras.policyWide ? ", policy-wide" : ""}`;
}

/** The text of a duration: "850 ms", "2.05 s", "1 m 40 s". */
export function expectedDuration(ms: number): string {
  const sign = ms < 0 ? MINUS : "";
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${displayed(a / 1000)} s`;
  const seconds = Math.round((a % 60_000) / 1000);
  return `${sign}${Math.floor(a / 60_000)} m${seconds > 0 ? ` ${seconds} s` : ""}`;
}

/** The text of a pane's delays: "emit 2 s + 40 ms pipeline". */
export function expectedDelay(emitDelayMs: number, pipelineLagMs: number): string {
  return `emit ${expectedDuration(emitDelayMs)} + ${expectedDuration(pipelineLagMs)} pipeline`;
}
