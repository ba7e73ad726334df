/**
 * An hour of an SLO's budget ledger as a TM_SLO_BUDGET message (docs/slo.md, "Error budget"):
 * subject `tm.slo.budget.<slo name, base64url>.<hour start, ms>`, body JSON with the SLO's
 * definition fields the counts depend on, so an hour written under another definition (policy,
 * service, SLI, pane size changed) is not restored into this one.
 */
import { zero, type Counts } from "./slo-cells.js";
import type { BudgetHour } from "./budget-ledger.js";
import type { SloDefinition } from "./slo-config.js";

export const STREAM_SLO_BUDGET = "TM_SLO_BUDGET";
export const SUBJECT_SLO_BUDGET = "tm.slo.budget";

interface Body {
  v: 1;
  slo: string;
  definition: string;
  hour: number;
  counts: Counts;
  windows: string;
}

/** What the counts of an SLO's hours depend on. */
function definitionOf(slo: SloDefinition): string {
  return JSON.stringify([slo.policy, slo.service, slo.sli, slo.paneMs]);
}

export function budgetSubject(slo: string, hour: number): string {
  return `${SUBJECT_SLO_BUDGET}.${Buffer.from(slo).toString("base64url")}.${hour}`;
}

export function encodeHour(slo: SloDefinition, h: BudgetHour): string {
  const body: Body = {
    v: 1,
    slo: slo.name,
    definition: definitionOf(slo),
    hour: h.hour,
    counts: h.counts,
    windows: Buffer.from(h.windows).toString("base64"),
  };
  return JSON.stringify(body);
}

/** The hour of `slo` a message holds; undefined when it is another SLO's, another definition's, or unreadable. */
export function decodeHour(slo: SloDefinition, json: string): BudgetHour | undefined {
  let b: Partial<Body>;
  try {
    b = JSON.parse(json) as Partial<Body>;
  } catch {
    return undefined;
  }
  if (b.v !== 1 || b.slo !== slo.name || b.definition !== definitionOf(slo)) return undefined;
  if (typeof b.hour !== "number" || typeof b.windows !== "string" || typeof b.counts !== "object") return undefined;
  const counts = zero();
  for (const k of Object.keys(counts) as Array<keyof Counts>) {
    const x = (b.counts as unknown as Record<string, unknown>)[k];
    if (typeof x !== "number" || !Number.isFinite(x)) return undefined;
    counts[k] = x;
  }
  return { hour: b.hour, counts, windows: new Uint8Array(Buffer.from(b.windows, "base64")) };
}
