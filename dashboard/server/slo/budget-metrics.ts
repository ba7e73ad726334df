/**
 * TM_SLO_BUDGET's store on the dashboard's /metrics (docs/slo.md, "Error budget"): hours written
 * (and purged) by outcome, and what the start read back. Registered only with SLOs configured.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { BudgetStoreCounts } from "./budget-store.js";

export function budgetMetrics(registry: Registry): BudgetStoreCounts {
  const registers = [registry];
  const writes = new Counter({
    name: "tidemark_dashboard_slo_budget_writes_total",
    help: 'Hours of the SLO budget ledgers written to (or purged from) TM_SLO_BUDGET, by outcome ("ok", "failed": retried)',
    labelNames: ["outcome"],
    registers,
  });
  for (const outcome of ["ok", "failed"]) writes.inc({ outcome }, 0);
  const restored = new Gauge({
    name: "tidemark_dashboard_slo_budget_restored_entries",
    help: "Entries (one per SLO and hour) of the SLO budget ledgers read back from TM_SLO_BUDGET at the start",
    registers,
  });
  const ignored = new Gauge({
    name: "tidemark_dashboard_slo_budget_ignored_entries",
    help: "Entries (one per SLO and hour) in TM_SLO_BUDGET not restored at the start: another SLO definition, or outside the period",
    registers,
  });
  return {
    wrote: (outcome) => writes.inc({ outcome }),
    restored: (r) => {
      restored.set(r.hours);
      ignored.set(r.ignored);
    },
  };
}
