/**
 * The Prometheus HTTP API on the dashboard server (docs/prometheus-api.md): instant and range
 * queries, labels, series, metadata — under the dashboard's read token. Grafana's Prometheus data
 * source and promtool read tidemark through it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasReadToken } from "../auth.js";
import type { DashboardConfig } from "../config.js";
import { DashboardError } from "../errors.js";
import { dashboardMetrics, type DashboardMetrics } from "../metrics.js";
import {
  evaluateInstant,
  parsePromql,
  rangeSteps,
  type Matcher,
  type Queryable,
  type SeriesView,
} from "../promql/index.js";
import { biasWarnings } from "./bias-warnings.js";
import { buildInfo } from "./build-info.js";
import { labelRoutes, type QueryRoute } from "./label-routes.js";
import type { PaneSamples } from "./pane-samples.js";
import type { ExtraSeries } from "./extra-series.js";
import type { PaneView } from "./pane-view.js";
import { paramError, PromParams, rangeOf, type PromHandler } from "./prom-params.js";
import { errorReply, instantData, matrixBody, successJson } from "./prom-response.js";
import { QueryRunner, type QueryContext } from "./query-runner.js";

/** What the API reads besides its config and samples; each has a default. */
export interface PromApiDeps {
  /** Log time: what an instant query without `time` evaluates at (default Date.now). */
  now?: () => number;
  /** Where query limits are counted (default: a registry of its own). */
  metrics?: DashboardMetrics;
  /** Series served beside the panes' (the SLO series). */
  extra?: ExtraSeries;
  /** The monotonic clock of query deadlines and turns, ms (default performance.now; tests drive it). */
  clock?: () => number;
}

/**
 * Registers `/api/v1/*` as a fastify plugin (its own scope: the form parser and auth hook stay in it).
 * Queries run within the limits of docs/prometheus-api.md, "Query limits", counted in `metrics`.
 */
export function promApi(config: DashboardConfig, samples: PaneSamples, deps: PromApiDeps = {}) {
  const now = deps.now ?? Date.now;
  const metrics = deps.metrics ?? dashboardMetrics();
  const extra = deps.extra;
  return async (app: FastifyInstance): Promise<void> => {
    const runner = new QueryRunner(config, metrics, deps.clock);
    app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) =>
      done(null, body),
    );
    app.addHook("preValidation", async (req, reply) => {
      if (hasReadToken(config, req)) return;
      const e = new DashboardError(
        "TM_DASHBOARD_UNAUTHORIZED",
        "a read token is required: pass Authorization: Bearer <token>, or basic auth with the token as password (promtool 2.42: http://tidemark:<token>@host:port)",
      );
      await send(reply, () => {
        throw e;
      });
    });
    const route = (path: string, handler: PromHandler, methods: Array<"GET" | "POST"> = ["GET", "POST"]): void => {
      app.route({
        method: methods,
        url: path,
        handler: (req, reply) =>
          send(reply, () => handler(new PromParams(req.url, req.body, req.params as Record<string, string>))),
      });
    };
    const query: QueryRoute = (path, work, methods = ["GET", "POST"]) => {
      app.route({
        method: methods,
        url: path,
        handler: (req, reply) =>
          send(reply, () => {
            const p = new PromParams(req.url, req.body, req.params as Record<string, string>);
            return runner.run(p, reply, (ctx) => work(p, ctx));
          }),
      });
    };
    query("/api/v1/query", (p, ctx) => instantQuery(p, samples, now(), ctx, extra));
    query("/api/v1/query_range", (p, ctx) => rangeQuery(p, samples, ctx, extra));
    labelRoutes(route, query, samples, extra);
    route("/api/v1/status/buildinfo", () => successJson(JSON.stringify(buildInfo(process.versions.node)), []), ["GET"]);
    route("/api/v1/query_exemplars", (p) => exemplars(p));
    app.route({
      method: ["GET", "POST"],
      url: "/api/v1/*",
      handler: (req: FastifyRequest, reply) =>
        send(reply, () => {
          throw new DashboardError(
            "TM_PROM_NOT_FOUND",
            `${req.url.split("?")[0]} is not served: tidemark answers /api/v1/query, query_range, query_exemplars, labels, label/<name>/values, series, metadata and status/buildinfo (docs/prometheus-api.md)`,
          );
        }),
    });
  };
}

async function send(
  reply: FastifyReply,
  body: () => string | Buffer | Promise<string | Buffer>,
): Promise<FastifyReply> {
  try {
    return reply.type("application/json").send(await body());
  } catch (err) {
    const e = errorReply(err);
    return reply.code(e.status).type("application/json").send(JSON.stringify(e.body));
  }
}

/** A per-query view of the samples that remembers the series the query selected (for the warnings). */
class Recorder implements Queryable {
  readonly views: PaneView[] = [];
  constructor(
    private readonly samples: PaneSamples,
    private readonly extra: ExtraSeries | undefined,
  ) {}
  select(matchers: readonly Matcher[]): SeriesView[] {
    const v = this.samples.select(matchers);
    this.views.push(...v);
    return this.extra ? [...v, ...this.extra.select(matchers)] : v;
  }
}

async function instantQuery(
  p: PromParams,
  samples: PaneSamples,
  nowMs: number,
  ctx: QueryContext,
  extra: ExtraSeries | undefined,
): Promise<string> {
  const expr = parsePromql(p.required("query", "query=tidemark_requests"));
  const timeMs = p.time("time", nowMs);
  const source = new Recorder(samples, extra);
  const lookbackMs = p.duration("lookback_delta", 300_000);
  const value = evaluateInstant(expr, source, timeMs, { lookbackMs, guard: ctx.guard });
  return successJson(instantData(value, timeMs), biasWarnings(source.views));
}

/** tidemark keeps no exemplars: a valid request gets Prometheus's answer without exemplar storage, an empty list. */
function exemplars(p: PromParams): string {
  parsePromql(p.required("query", "query=tidemark_requests"));
  const start = p.time("start", -Infinity);
  const end = p.time("end", Infinity);
  if (end < start) throw paramError("end", "end timestamp must not be before start time");
  return successJson("[]", []);
}

/** Step by step, giving the event loop a turn between slices (docs/prometheus-api.md, "Query limits"). */
async function rangeQuery(
  p: PromParams,
  samples: PaneSamples,
  ctx: QueryContext,
  extra: ExtraSeries | undefined,
): Promise<Buffer> {
  const expr = parsePromql(p.required("query", "query=tidemark_requests"));
  const range = rangeOf(p);
  const source = new Recorder(samples, extra);
  const lookbackMs = p.duration("lookback_delta", 300_000);
  const steps = rangeSteps(expr, source, range, { lookbackMs, guard: ctx.guard });
  let r = steps.next();
  while (!r.done) {
    await ctx.pause();
    r = steps.next();
  }
  return matrixBody(r.value, biasWarnings(source.views), ctx.maxResponseBytes);
}
