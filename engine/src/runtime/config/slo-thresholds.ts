/**
 * The latency thresholds the engine counts exactly (docs/semantics.md, "Latency thresholds";
 * docs/decisions/0044-exact-latency-thresholds.md): the union of the SLOs' `sli.latencyAboveMs` in
 * the config file, ascending. The file's SLOs are the one source: the dashboard server reads the
 * same file, so every threshold an SLO needs is counted and none it does not. The rest of each SLO
 * is the dashboard's to validate.
 */
import { MAX_LATENCY_THRESHOLDS } from "../../core/index.js";
import { badSetting } from "../errors.js";

export function sloLatencyThresholds(slos: unknown, fileName: string): number[] {
  if (slos === undefined) return [];
  if (!Array.isArray(slos)) throw badSetting(`${fileName}: slos`, "an array of SLO definitions", slos);
  const found = new Set<number>();
  slos.forEach((s: unknown, i) => {
    const sli = typeof s === "object" && s !== null ? (s as Record<string, unknown>).sli : undefined;
    if (typeof sli !== "object" || sli === null || !("latencyAboveMs" in sli)) return;
    const ms = (sli as Record<string, unknown>).latencyAboveMs;
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > 2 ** 31 - 1)
      throw badSetting(`${fileName}: slos[${i}].sli.latencyAboveMs`, "a whole number of milliseconds ≥ 1", ms);
    found.add(ms);
  });
  if (found.size > MAX_LATENCY_THRESHOLDS)
    throw badSetting(
      `${fileName}: slos[].sli.latencyAboveMs`,
      `at most ${MAX_LATENCY_THRESHOLDS} distinct thresholds over all SLOs (each is counted per event): share thresholds between SLOs`,
      [...found].sort((a, b) => a - b),
    );
  return [...found].sort((a, b) => a - b);
}
