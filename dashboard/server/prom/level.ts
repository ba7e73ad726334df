/** The three levels a pane's series belong to (docs/decisions/0037-prometheus-data-model.md). */
export type Level = "service" | "route" | "all";
export const LEVELS: readonly Level[] = ["service", "route", "all"];
