/**
 * What a function call or a subquery needs of the evaluation it runs in (evaluate.ts's Evaluation):
 * sub-expressions at a step, a selector's sample columns, the time an `@` fixes, the subquery step.
 * A narrow contract, so eval-call.ts and subquery.ts never see the evaluator's caches.
 */
import type { AtModifier, Expr, SelectorExpr, SubqueryExpr } from "./ast.js";
import type { SampleColumns } from "./sample-columns.js";
import type { RangeSeries, Sample } from "./values.js";

export interface EvalContext {
  /** The default step of a subquery without its own. */
  readonly subqueryStepMs: number;
  /** The time an `@` modifier fixes, else the step's. */
  evalTime(at: AtModifier | undefined, t: number): number;
  vector(e: Expr, t: number): Sample[];
  scalar(e: Expr, t: number): number;
  /** True when the selector's series keep distinct label sets without `__name__`. */
  distinctWithoutName(e: SelectorExpr): boolean;
  /** The selector's series as sample columns, loaded for a range (or the instant lookback). */
  columns(e: SelectorExpr, rangeMs?: number): readonly SampleColumns[];
  /** The subquery's inner expression at each multiple of its step. */
  subquery(e: SubqueryExpr, t: number): RangeSeries[];
}
