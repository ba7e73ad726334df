/**
 * A query's counted bounds while it is evaluated (docs/prometheus-api.md, "Query limits";
 * docs/decisions/0042-query-limits.md): series selected, samples held, its deadline and whether its
 * client is still there. Pure: the clock and the client's state come in as functions.
 */
import { DashboardError, type DashboardErrorCode } from "../errors.js";

/** The bounds a guard checks; each is a setting of the dashboard (the adapter names it). */
export type QueryLimit = "series" | "samples" | "step_time" | "response_bytes" | "queue" | "timeout" | "canceled";

export interface GuardLimits {
  /** Series the query's selectors select, added up over its selectors. */
  readonly maxSeries: number;
  /** Samples held at once: loaded for the whole query and gathered into its result, plus one step's own. */
  readonly maxSamples: number;
  /**
   * How long evaluation may hold the event loop between two turns, ms: a step (its subqueries'
   * inner evaluations included) cannot be broken, so a longer one is stopped.
   */
  readonly maxStepMs: number;
}

export interface GuardClock {
  now(): number;
  /** The time (of now()) past which the query stops. */
  readonly deadline: number;
  /** True once the client went away. */
  aborted(): boolean;
}

const CODES: Partial<Record<QueryLimit, DashboardErrorCode>> = {
  timeout: "TM_PROM_TIMEOUT",
  canceled: "TM_PROM_CANCELED",
  queue: "TM_PROM_BUSY",
};

/** A query stopped by one of its bounds: `limit` names which. */
export class QueryLimitError extends DashboardError {
  constructor(
    readonly limit: QueryLimit,
    message: string,
  ) {
    super(CODES[limit] ?? "TM_PROM_LIMIT", message);
  }
}

export class QueryGuard {
  private series = 0;
  /** Samples held for the rest of the query: loaded columns, result points gathered so far. */
  private held = 0;
  /** Samples of the step being evaluated (range selectors' points, subqueries' points, vectors). */
  private step = 0;
  /** When evaluation last got the event loop back (a turn began). */
  private turnStart: number;

  constructor(
    readonly limits: GuardLimits,
    private readonly clock: GuardClock,
  ) {
    this.turnStart = clock.now();
  }

  /** Evaluation resumes after a turn of the event loop. */
  resumed(): void {
    this.turnStart = this.clock.now();
  }

  /** A selector selected n series. */
  selected(n: number): void {
    this.series += n;
    if (this.series > this.limits.maxSeries)
      throw new QueryLimitError(
        "series",
        `query selects too many series: more than ${this.limits.maxSeries} (${this.series} so far)`,
      );
  }

  /** n samples are held until the query ends (loaded columns, result points). */
  hold(n: number): void {
    this.held += n;
    this.checkSamples();
  }

  /** n samples are held while the current step is evaluated. */
  stepSamples(n: number): void {
    this.step += n;
    this.checkSamples();
  }

  /** The step ended: its own samples are let go; the points it added to the result (n) are held. */
  endStep(n: number): void {
    this.step = 0;
    this.hold(n);
    this.check();
  }

  /** Stops the query when its deadline passed or its client went away. */
  check(): void {
    if (this.clock.aborted()) throw new QueryLimitError("canceled", "query canceled: the client closed the connection");
    const now = this.clock.now();
    if (now > this.clock.deadline) throw new QueryLimitError("timeout", "query timed out in expression evaluation");
    if (now - this.turnStart > this.limits.maxStepMs)
      throw new QueryLimitError(
        "step_time",
        `one evaluation step held the server for more than ${this.limits.maxStepMs} ms (a step, its subqueries included, runs without a break): use a larger subquery step, a shorter range or fewer series`,
      );
  }

  private checkSamples(): void {
    const n = this.held + this.step;
    if (n > this.limits.maxSamples)
      throw new QueryLimitError(
        "samples",
        `query processing would load too many samples into memory in query execution: more than ${this.limits.maxSamples}`,
      );
  }
}

/** No bounds: the engine's callers that are not the Prometheus API (alert rules, tests). */
export const UNGUARDED = new QueryGuard(
  { maxSeries: Infinity, maxSamples: Infinity, maxStepMs: Infinity },
  { now: () => 0, deadline: Infinity, aborted: () => false },
);
