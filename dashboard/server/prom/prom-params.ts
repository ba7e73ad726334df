/**
 * Parameters of the Prometheus HTTP API, from the query string and a form body (promtool POSTs
 * `application/x-www-form-urlencoded`); a bad one is a 400 naming it and what it expects.
 */
import { DashboardError } from "../errors.js";
import { durationMs, parsePromql, type Matcher } from "../promql/index.js";

/** Prometheus's limit on points per series of a range query. */
export const MAX_POINTS = 11_000;

export class PromParams {
  private readonly body: URLSearchParams;
  private readonly query: URLSearchParams;

  constructor(
    url: string,
    body: unknown,
    private readonly pathParams: Readonly<Record<string, string>> = {},
  ) {
    this.query = new URL(url, "http://localhost").searchParams;
    this.body = new URLSearchParams(typeof body === "string" ? body : "");
  }

  /** A parameter of the route's path, e.g. the label name of /api/v1/label/<name>/values. */
  path(name: string): string {
    return this.pathParams[name] ?? "";
  }

  /** The form value wins over the query string's, as in Prometheus. */
  get(name: string): string | undefined {
    return this.body.get(name) ?? this.query.get(name) ?? undefined;
  }

  all(name: string): string[] {
    return [...this.body.getAll(name), ...this.query.getAll(name)];
  }

  required(name: string, example: string): string {
    const v = this.get(name);
    if (v === undefined || v === "") throw paramError(name, `is required, e.g. ${example}`);
    return v;
  }

  /** Unix seconds (may be fractional) or RFC 3339; ms. */
  time(name: string, fallback: number): number {
    const v = this.get(name);
    if (v === undefined || v === "") return fallback;
    const ms = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(v) ? Math.round(Number(v) * 1000) : Date.parse(v);
    if (!Number.isFinite(ms) || !/\d/.test(v))
      throw paramError(
        name,
        `cannot parse ${JSON.stringify(v)} to a valid timestamp: give unix seconds (1700000000.5) or RFC 3339 (2023-11-14T22:13:20Z)`,
      );
    return ms;
  }

  /** Seconds (may be fractional) or a Prometheus duration (15s, 1m, 1h30m); ms, > 0. */
  duration(name: string, fallback?: number): number {
    const v = this.get(name);
    if ((v === undefined || v === "") && fallback !== undefined) return fallback;
    const ms = v === undefined ? undefined : durationMs(v);
    if (ms === undefined)
      throw paramError(
        name,
        `cannot parse ${JSON.stringify(v ?? "")} to a valid duration: give seconds (15) or a duration (15s, 1m)`,
      );
    if (ms <= 0) throw paramError(name, "must be positive: zero or negative durations are not accepted, e.g. 15s");
    return ms;
  }

  /** `match[]` selectors (series selectors only, as Prometheus's label and series endpoints take). */
  matchers(required: boolean): Matcher[][] {
    const all = this.all("match[]");
    if (required && all.length === 0)
      throw paramError(
        "match[]",
        'is required: no match[] parameter provided, e.g. match[]=tidemark_requests{policy="billing"}',
      );
    return all.map((text) => {
      let e;
      try {
        e = parsePromql(text);
      } catch (err) {
        throw paramError("match[]", `${JSON.stringify(text)}: ${(err as Error).message}`);
      }
      if (e.type !== "selector" || e.offsetMs !== 0)
        throw paramError(
          "match[]",
          `${JSON.stringify(text)} must be a series selector such as tidemark_requests{service="api"}`,
        );
      return [...e.matchers];
    });
  }
}

export function paramError(name: string, what: string): DashboardError {
  return new DashboardError("TM_PROM_PARAM_INVALID", `invalid parameter ${JSON.stringify(name)}: ${what}`);
}

/** start, end, step of a range query, checked as Prometheus checks them. */
export function rangeOf(p: PromParams): { startMs: number; endMs: number; stepMs: number } {
  const startMs = p.time("start", NaN);
  const endMs = p.time("end", NaN);
  if (Number.isNaN(startMs)) throw paramError("start", "is required: unix seconds or RFC 3339");
  if (Number.isNaN(endMs)) throw paramError("end", "is required: unix seconds or RFC 3339");
  if (p.get("step") === undefined) throw paramError("step", "is required: seconds (15) or a duration (15s)");
  const stepMs = p.duration("step");
  if (endMs < startMs) throw paramError("end", "end timestamp must not be before start time");
  if ((endMs - startMs) / stepMs > MAX_POINTS)
    throw paramError(
      "step",
      `exceeded maximum resolution of ${MAX_POINTS.toLocaleString("en")} points per timeseries. Try decreasing the query resolution (?step=XX)`,
    );
  return { startMs, endMs, stepMs };
}

/** One API route's answer: the JSON body for the parsed parameters. */
export type PromHandler = (p: PromParams) => string | Buffer;
