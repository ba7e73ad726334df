/**
 * An SLO as the dashboard panel shows it (protocol/slos.ts; docs/slo.md, "Dashboard panel"): the
 * book's reading at the newest window end, as plain JSON (no Infinity).
 */
import type { SloTierView, SloView, SloWindowView } from "../../protocol/slos.js";
import type { Budget, TierVerdict, WindowBurn } from "./burn-rate.js";
import type { SloDefinition } from "./slo-config.js";
import { exhaustionText, windowText } from "./slo-text.js";

/** The book's reading of one SLO at a window end (slo-book.ts). */
export interface SloRead {
  readonly verdicts: TierVerdict[];
  readonly budget: Budget;
  /** Why the SLO cannot be read, when it cannot (docs/slo.md, "Latency SLI"); null otherwise. */
  readonly status: string | null;
  /** The window end read. */
  readonly at: number;
}

type AlertState = "inactive" | "pending" | "firing";

function windowView(w: WindowBurn): SloWindowView {
  return {
    window: windowText(w.windowMs),
    requests: w.requests,
    raw: w.raw,
    corrected: w.corrected,
    halfWidth: w.halfWidth,
    biasPp: w.biasPp,
  };
}

export function sloView(
  slo: SloDefinition,
  read: SloRead,
  alerts: Record<string, AlertState>,
  countedFrom: number | null,
): SloView {
  const at = Number.isFinite(read.at) ? read.at : null;
  const tiers: SloTierView[] = read.verdicts.map((v) => ({
    severity: v.tier.severity,
    factor: v.tier.factor,
    long: windowView(v.long),
    short: windowView(v.short),
    crossed: v.crossed,
    mayFlip: v.mayFlip,
    provisional: v.provisional,
    firing: v.crossed && alerts[v.tier.severity] === "firing",
  }));
  const b = read.budget;
  return {
    name: slo.name,
    service: slo.service,
    policy: slo.policy,
    objective: slo.objective,
    period: windowText(slo.periodMs),
    sli: typeof slo.sli === "object" ? `latency > ${slo.sli.latencyAboveMs} ms` : "errors",
    at,
    status: read.status,
    budget: {
      remaining: b.remaining,
      remainingRaw: b.remainingRaw,
      halfWidth: b.halfWidth,
      from: at === null ? null : at - slo.periodMs,
      to: at,
      countedFrom,
      exhaustionMs: Number.isFinite(b.exhaustionMs) ? b.exhaustionMs : null,
      exhaustion: exhaustionText(b.exhaustionMs),
    },
    tiers,
    alerts,
  };
}
