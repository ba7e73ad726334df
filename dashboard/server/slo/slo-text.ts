/**
 * What an SLO alert says (docs/slo.md, "Alerts"): labels in the contract's shape and annotations
 * stating the corrected burn rates, the raw ones, the bias with its interval, the budget left and
 * the time to exhaustion.
 */
import { ALL_SERVICES } from "@tidemark/engine/protocol";
import type { Budget, TierVerdict, WindowBurn } from "./burn-rate.js";
import type { Severity, SloDefinition } from "./slo-config.js";

export const SLO_ALERTNAME = "SLOBurnRate";

/** Durations as the SLO series' `window` label writes them: 5m, 1h, 3d. */
export function windowText(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

export function sloLabels(slo: SloDefinition, severity: Severity): Record<string, string> {
  return { ...slo.labels, alertname: SLO_ALERTNAME, slo: slo.name, service: slo.service, severity, policy: slo.policy };
}

const num = (x: number): string => (Number.isFinite(x) ? String(Number(x.toPrecision(4))) : "+Inf");

function burnText(w: WindowBurn): string {
  return w.halfWidth === null ? num(w.corrected) : `${num(w.corrected)} ± ${num(w.halfWidth)}`;
}

export function sloAnnotations(slo: SloDefinition, v: TierVerdict, budget: Budget): Record<string, string> {
  const bias = v.long.biasPp === null ? "not measured yet" : `${num(v.long.biasPp)} pp error rate (policy − reference)`;
  const scope = slo.service === ALL_SERVICES ? "all services" : `service ${slo.service}`;
  const out: Record<string, string> = {
    summary: `SLO ${slo.name} (${scope}, objective ${slo.objective}) burns its error budget ${num(v.long.corrected)}× over ${windowText(v.tier.longMs)} and ${num(v.short.corrected)}× over ${windowText(v.tier.shortMs)}, threshold ${v.tier.factor}×`,
    ...slo.annotations,
    long_window: windowText(v.tier.longMs),
    short_window: windowText(v.tier.shortMs),
    factor: String(v.tier.factor),
    burn_rate_long: burnText(v.long),
    burn_rate_short: burnText(v.short),
    burn_rate_long_raw: num(v.long.raw),
    burn_rate_short_raw: num(v.short.raw),
    bias,
    budget_remaining:
      budget.halfWidth === null ? num(budget.remaining) : `${num(budget.remaining)} ± ${num(budget.halfWidth)}`,
    time_to_exhaustion: exhaustionText(budget.exhaustionMs),
    may_flip: v.mayFlip ? "true" : "false",
  };
  if (v.provisional)
    out["provisional"] = "bias not measured for every pane yet: the raw value stands in for the corrected one";
  return out;
}

export function exhaustionText(ms: number): string {
  if (!Number.isFinite(ms)) return "never at this burn rate";
  if (ms <= 0) return "0s (budget spent)";
  return windowText(Math.max(1000, Math.round(ms / 1000) * 1000));
}
