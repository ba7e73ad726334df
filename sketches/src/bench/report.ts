/** One line of the benchmark table: our number, the baseline's from the same run, the target. */
export interface Row {
  what: string;
  unit: string;
  ours: number;
  baseline?: { name: string; value: number };
  /** Upper bound on `ours` (and on ours/baseline when `ratioTarget` is set). */
  target?: number;
  ratioTarget?: number;
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toFixed(3);
}

function verdict(r: Row): string {
  const checks: boolean[] = [];
  if (r.target !== undefined) checks.push(r.ours <= r.target);
  if (r.ratioTarget !== undefined && r.baseline) checks.push(r.ours / r.baseline.value <= r.ratioTarget);
  if (checks.length === 0) return "";
  return checks.every(Boolean) ? "met" : "MISSED";
}

function targetText(r: Row): string {
  const parts: string[] = [];
  if (r.target !== undefined) parts.push(`≤ ${fmt(r.target)} ${r.unit}`);
  if (r.ratioTarget !== undefined) parts.push(`ratio ≤ ${fmt(r.ratioTarget)}`);
  return parts.join(", ");
}

export function cells(r: Row): string[] {
  return [
    r.what,
    `${fmt(r.ours)} ${r.unit}`,
    r.baseline ? `${fmt(r.baseline.value)} ${r.unit} (${r.baseline.name})` : "—",
    r.baseline ? fmt(r.ours / r.baseline.value) : "—",
    targetText(r) || "—",
    verdict(r) || "—",
  ];
}

export const HEADER = ["measure", "ours", "baseline (same run)", "ours / baseline", "target", "verdict"];

export function textTable(rows: Row[]): string {
  const all = [HEADER, ...rows.map(cells)];
  const widths = HEADER.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  return all.map((r) => r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join("  ")).join("\n");
}

export function markdownTable(rows: Row[]): string {
  const line = (r: string[]) => `| ${r.join(" | ")} |`;
  return [line(HEADER), line(HEADER.map(() => "---")), ...rows.map((r) => line(cells(r)))].join("\n");
}

export function missed(rows: Row[]): Row[] {
  return rows.filter((r) => verdict(r) === "MISSED");
}
