/**
 * `/api/v1/labels`, `/api/v1/label/<name>/values`, `/api/v1/series`, `/api/v1/metadata`
 * (docs/prometheus-api.md). The first three run as queries do (docs/prometheus-api.md, "Query
 * limits"): a slot among the concurrent queries, the deadline, the series limit, the response bound.
 */
import { compareLabels, signature, type Labels, type Matcher } from "../promql/index.js";
import { METRICS } from "./metric-catalog.js";
import type { ExtraSeries } from "./extra-series.js";
import type { PaneSamples } from "./pane-samples.js";
import { paramError, type PromHandler, type PromParams } from "./prom-params.js";
import type { QueryContext } from "./query-runner.js";
import { successJson } from "./prom-response.js";

type Route = (path: string, handler: PromHandler, methods?: Array<"GET" | "POST">) => void;
/** Registers a route that runs within the query limits (prom-api.ts). */
export type QueryRoute = (
  path: string,
  work: (p: PromParams, ctx: QueryContext) => Promise<string | Buffer>,
  methods?: Array<"GET" | "POST">,
) => void;

export function labelRoutes(route: Route, query: QueryRoute, samples: PaneSamples, extra?: ExtraSeries): void {
  query("/api/v1/labels", async (p, ctx) => {
    const names = new Set<string>();
    for (const l of await seriesOf(p, samples, false, ctx, extra)) for (const n of Object.keys(l)) names.add(n);
    return successJson(JSON.stringify([...names].sort()), []);
  });
  query(
    "/api/v1/label/:name/values",
    async (p, ctx) => {
      const name = p.path("name");
      const values = new Set<string>();
      for (const l of await seriesOf(p, samples, false, ctx, extra)) {
        const v = l[name];
        if (v !== undefined && v !== "") values.add(v);
      }
      return successJson(JSON.stringify([...values].sort()), []);
    },
    ["GET"],
  );
  query("/api/v1/series", async (p, ctx) =>
    successJson(JSON.stringify(await seriesOf(p, samples, true, ctx, extra)), []),
  );
  route(
    "/api/v1/metadata",
    (p) => {
      const only = p.get("metric");
      const limit = metadataLimit(p);
      const out: Record<string, Array<{ type: string; help: string; unit: string }>> = {};
      for (const d of [...METRICS, ...(extra?.metrics ?? [])]) {
        if ((only && d.name !== only) || out[d.name]) continue;
        if (Object.keys(out).length >= limit) break;
        out[d.name] = [{ type: "gauge", help: d.help, unit: "unit" in d ? d.unit : "" }];
      }
      return successJson(JSON.stringify(out), []);
    },
    ["GET"],
  );
}

/** Prometheus's `limit` of /api/v1/metadata: at most that many metrics (0: none); absent or negative: all. */
function metadataLimit(p: PromParams): number {
  const text = p.get("limit");
  if (text === undefined || text === "") return Infinity;
  const n = Number(text);
  if (!Number.isInteger(n))
    throw paramError("limit", `cannot parse ${JSON.stringify(text)}: give a whole number of metrics (10)`);
  return n < 0 ? Infinity : n;
}

/** Series pairs scanned between two offers of a turn of the event loop (ctx.pause gives one once a slice is used up). */
const PAUSE_EVERY = 256;

/**
 * The distinct label sets of the series matching any `match[]` (all series without one) in
 * [start, end], in turns: the scan offers the event loop a turn every PAUSE_EVERY series, and each
 * turn checks the deadline and the client (docs/prometheus-api.md, "Query limits"); every new
 * label set counts against the query's series limit as it is found.
 */
async function seriesOf(
  p: PromParams,
  samples: PaneSamples,
  required: boolean,
  ctx: QueryContext,
  extra?: ExtraSeries,
): Promise<Labels[]> {
  const selectors: Matcher[][] = p.matchers(required);
  const from = p.time("start", -Infinity);
  const to = p.time("end", Infinity);
  const bySig = new Map<string, Labels>();
  const add = (l: Labels): void => {
    const sig = signature(l);
    if (bySig.has(sig)) return;
    bySig.set(sig, l);
    ctx.guard.selected(1);
  };
  for (const matchers of selectors.length > 0 ? selectors : [[]]) {
    for (const sets of samples.seriesScan(matchers, from, to, PAUSE_EVERY)) {
      for (const l of sets) add(l);
      await ctx.pause();
    }
    for (const l of extra?.seriesIn(matchers, from, to) ?? []) add(l);
  }
  ctx.guard.check();
  return [...bySig.values()].sort(compareLabels);
}
