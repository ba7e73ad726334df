/**
 * Runs one Prometheus API query within its limits (docs/prometheus-api.md, "Query limits"): a slot
 * among queryMaxConcurrency (or a place in the queue), a deadline (queryTimeoutMs, or the request's
 * shorter `timeout`), a QueryGuard over series and samples, turns of the event loop between steps,
 * and a stop when the client goes away. A limit's error names the setting that raises it.
 */
import type { FastifyReply } from "fastify";
import { performance } from "node:perf_hooks";
import type { DashboardConfig } from "../config.js";
import { settingNames } from "../config-values.js";
import type { DashboardMetrics } from "../metrics.js";
import { QueryGuard, QueryLimitError, type QueryLimit } from "../promql/index.js";
import type { PromParams } from "./prom-params.js";
import { QuerySlots } from "./query-slots.js";

/** Evaluation runs at most this long between turns of the event loop, ms. */
export const SLICE_MS = 10;

/** What a query's evaluation gets: its guard, a way to yield, its response bound. */
export interface QueryContext {
  readonly guard: QueryGuard;
  /** Gives the event loop a turn when the current slice is used up, then checks deadline and client. */
  pause(): Promise<void>;
  readonly maxResponseBytes: number;
}

/** The setting behind each limit, named in its error. */
const SETTING: Record<QueryLimit, keyof DashboardConfig> = {
  series: "queryMaxSeries",
  samples: "queryMaxSamples",
  step_time: "queryMaxStepMs",
  response_bytes: "queryMaxResponseBytes",
  queue: "queryMaxQueued",
  timeout: "queryTimeoutMs",
  canceled: "queryTimeoutMs",
};

export class QueryRunner {
  private readonly slots: QuerySlots;

  constructor(
    private readonly config: DashboardConfig,
    private readonly metrics: DashboardMetrics,
    /** Monotonic ms of deadlines and turns. */
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.slots = new QuerySlots(config.queryMaxConcurrency, config.queryMaxQueued, (running, queued) => {
      metrics.promQueriesRunning.set(running);
      metrics.promQueriesQueued.set(queued);
    });
  }

  async run(p: PromParams, reply: FastifyReply, work: (ctx: QueryContext) => Promise<string | Buffer>) {
    const timeoutMs = Math.min(this.config.queryTimeoutMs, p.duration("timeout", this.config.queryTimeoutMs));
    const deadline = this.clock() + timeoutMs;
    let aborted = false;
    const gone = new Promise<void>((resolve) =>
      reply.raw.once("close", () => {
        if (!reply.raw.writableEnded) aborted = true;
        resolve();
      }),
    );
    try {
      await this.slots.acquire(timeoutMs, gone);
    } catch (err) {
      throw this.counted(err);
    }
    try {
      const guard = new QueryGuard(
        {
          maxSeries: this.config.queryMaxSeries,
          maxSamples: this.config.queryMaxSamples,
          maxStepMs: this.config.queryMaxStepMs,
        },
        { now: () => this.clock(), deadline, aborted: () => aborted },
      );
      let sliceStart = this.clock();
      const pause = async (): Promise<void> => {
        if (this.clock() - sliceStart < SLICE_MS) return;
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = this.clock();
        guard.resumed();
        guard.check();
      };
      const body = await work({ guard, pause, maxResponseBytes: this.config.queryMaxResponseBytes });
      if (Buffer.byteLength(body) > this.config.queryMaxResponseBytes)
        throw new QueryLimitError(
          "response_bytes",
          `the response would be larger than ${this.config.queryMaxResponseBytes} bytes: query fewer series or a shorter range`,
        );
      return body;
    } catch (err) {
      throw this.counted(err);
    } finally {
      this.slots.release();
    }
  }

  /** Counts a limit's error in /metrics and names the setting that raises it. */
  private counted(err: unknown): unknown {
    if (!(err instanceof QueryLimitError)) return err;
    this.metrics.promQueriesLimited.inc({ limit: err.limit });
    const setting = SETTING[err.limit];
    const raise =
      err.limit === "canceled"
        ? ""
        : ` (limit ${setting} = ${String(this.config[setting])}; raise it with ${settingNames(setting)})`;
    return new QueryLimitError(err.limit, `${err.message}${raise}`);
  }
}
