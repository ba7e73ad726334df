/**
 * An early pane judged on its nowcast (docs/operations.md, "Alerts", "Early panes on the
 * nowcast"): when the bias of the pane's kind and age is measured for its service, a rule that
 * reads one pane's value in the metric's own unit compares the corrected value, not the raw one.
 */
import type { PaneNowcast } from "@tidemark/engine/protocol";
import type { RuleShape } from "./rule-shape.js";

export interface Nowcast {
  readonly value: number;
  /** 95 % half-width; null when the bias has no interval yet. */
  readonly halfWidth: number | null;
}

type Field = keyof PaneNowcast["value"];

/** The nowcast field a metric reads, per second for request_rate; undefined when none fits. */
function fieldOf(shape: RuleShape): { field: Field; perSecond: boolean } | undefined {
  const base = shape.metric?.replace(/^tidemark_(route_|all_)?/, "");
  if (base === "error_ratio") return { field: "errorRate", perSecond: false };
  if (base === "requests") return { field: "count", perSecond: false };
  if (base === "request_rate") return { field: "count", perSecond: true };
  if (base === "users") return { field: "users", perSecond: false };
  if (base === "latency_ms" && shape.quantile === "0.99") return { field: "p99", perSecond: false };
  return undefined;
}

/** True when the rule's readings are one pane's value in the metric's unit, with a nowcast field. */
export function judgesOnNowcast(shape: RuleShape): boolean {
  return shape.plain && shape.rangeMs === 0 && !shape.sessions && fieldOf(shape) !== undefined;
}

/** The corrected value of a rule's reading from the one pane behind it, if measured. */
export function nowcastOf(shape: RuleShape, nowcast: PaneNowcast | undefined): Nowcast | null {
  const f = fieldOf(shape);
  if (!nowcast || !f || !judgesOnNowcast(shape)) return null;
  const scale = f.perSecond ? 1000 / shape.windowMs : 1;
  const hw = nowcast.spread[f.field];
  return { value: nowcast.value[f.field] * scale, halfWidth: hw === null ? null : hw * scale };
}
