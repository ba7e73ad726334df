/**
 * Alert rules over panes, pure (docs/decisions/0014-alerts.md): the rule's shape, the per-series
 * state machine, the annotations that state each alert's honesty, and the book that runs them.
 */
export { AlertBook, type AlertBookOptions } from "./alert-book.js";
export { OWN_ANNOTATIONS, OWN_LABELS, type AlertRule } from "./alert-text.js";
export { ruleShape, type RuleScope, type RuleShape } from "./rule-shape.js";
export type { AlertListener, AlertNotice } from "./rule-run.js";
