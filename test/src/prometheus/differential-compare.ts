/**
 * Asking tidemark and Prometheus the same query and comparing the answers: same result type, same
 * label sets (tidemark's sample label `pane_kind` left out: the TSDB holds no such label), values
 * equal to a relative 1e-9 (NaN equals NaN), the same order where Prometheus's order is the answer.
 */
import { TOKEN } from "./prom-rig.js";

export type Labels = Record<string, string>;

export type Answer =
  | { kind: "error"; status: number; message: string }
  | { kind: "scalar" | "string"; value: string }
  | { kind: "vector"; samples: Array<{ labels: Labels; value: string }> }
  | { kind: "matrix"; series: Array<{ labels: Labels; points: Array<[number, string]> }> };

export interface Ask {
  path: "/api/v1/query" | "/api/v1/query_range";
  params: Record<string, string>;
}

/** POSTs the query as a form; `token` adds tidemark's bearer token. */
export async function ask(base: string, q: Ask, token: boolean): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (token) headers["authorization"] = `Bearer ${TOKEN}`;
  const res = await fetch(`${base}${q.path}`, { method: "POST", headers, body: new URLSearchParams(q.params) });
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: unknown };
  };
  if (body.status !== "success" || !body.data) return { kind: "error", status: res.status, message: body.error ?? "" };
  const { resultType, result } = body.data;
  const clean = (l: Labels): Labels => {
    const out = { ...l };
    if (token) delete out["pane_kind"];
    return out;
  };
  if (resultType === "scalar" || resultType === "string")
    return { kind: resultType, value: (result as [number, string])[1] };
  if (resultType === "vector")
    return {
      kind: "vector",
      samples: (result as Array<{ metric: Labels; value: [number, string] }>).map((s) => ({
        labels: clean(s.metric),
        value: s.value[1],
      })),
    };
  return {
    kind: "matrix",
    series: (result as Array<{ metric: Labels; values: Array<[number, string]> }>).map((s) => ({
      labels: clean(s.metric),
      points: s.values,
    })),
  };
}

export function key(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a.replace("Inf", "Infinity"));
  const y = Number(b.replace("Inf", "Infinity"));
  if (Number.isNaN(x) && Number.isNaN(y)) return true;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** undefined when the answers agree, else what differs. */
export function difference(tidemark: Answer, prometheus: Answer, ordered: boolean): string | undefined {
  if (tidemark.kind === "error" || prometheus.kind === "error") {
    if (tidemark.kind === prometheus.kind) return undefined;
    return `tidemark ${describe(tidemark)} but Prometheus ${describe(prometheus)}`;
  }
  if (tidemark.kind !== prometheus.kind) return `tidemark answered a ${tidemark.kind}, Prometheus a ${prometheus.kind}`;
  if (tidemark.kind === "scalar" || tidemark.kind === "string") {
    const p = (prometheus as { value: string }).value;
    return sameValue(tidemark.value, p) ? undefined : `tidemark ${tidemark.value}, Prometheus ${p}`;
  }
  if (tidemark.kind === "vector") {
    const p = (prometheus as Extract<Answer, { kind: "vector" }>).samples;
    if (ordered) {
      const tv = tidemark.samples.map((s) => s.value);
      const pv = p.map((s) => s.value);
      if (tv.length !== pv.length || tv.some((v, i) => !sameValue(v, pv[i] as string)))
        return `order by value: tidemark ${tv.join(",")}, Prometheus ${pv.join(",")}`;
    }
    return diffSeries(
      tidemark.samples.map((s) => ({ labels: s.labels, points: [[0, s.value] as [number, string]] })),
      p.map((s) => ({ labels: s.labels, points: [[0, s.value] as [number, string]] })),
    );
  }
  return diffSeries(
    (tidemark as Extract<Answer, { kind: "matrix" }>).series,
    (prometheus as Extract<Answer, { kind: "matrix" }>).series,
  );
}

type SeriesList = Array<{ labels: Labels; points: Array<[number, string]> }>;

function diffSeries(t: SeriesList, p: SeriesList): string | undefined {
  const byKey = (l: SeriesList) => new Map(l.map((s) => [key(s.labels), s.points]));
  const tm = byKey(t);
  const pm = byKey(p);
  if (tm.size !== t.length) return "tidemark answered one label set twice";
  for (const k of pm.keys()) if (!tm.has(k)) return `tidemark lacks ${k} (${pm.size} series vs ${tm.size})`;
  for (const k of tm.keys()) if (!pm.has(k)) return `tidemark has an extra ${k} (${tm.size} series vs ${pm.size})`;
  for (const [k, tp] of tm) {
    const pp = pm.get(k) as Array<[number, string]>;
    const tt = tp.map(([ts]) => ts).join(",");
    const pt = pp.map(([ts]) => ts).join(",");
    if (tt !== pt) return `${k}: times differ: tidemark ${tt}; Prometheus ${pt}`;
    const i = tp.findIndex(([, v], j) => !sameValue(v, (pp[j] as [number, string])[1]));
    if (i >= 0) return `${k} at ${tp[i]?.[0]}: tidemark ${tp[i]?.[1]}, Prometheus ${pp[i]?.[1]}`;
  }
  return undefined;
}

function describe(a: Answer): string {
  if (a.kind === "error") return `failed (${a.status}: ${a.message})`;
  return `answered a ${a.kind}`;
}

/** True when the answer holds at least one value. */
export function nonEmpty(a: Answer): boolean {
  if (a.kind === "vector") return a.samples.length > 0;
  if (a.kind === "matrix") return a.series.length > 0;
  return a.kind !== "error";
}

/** Runs `jobs` with at most `n` in flight. */
export async function pool<T>(jobs: ReadonlyArray<() => Promise<T>>, n: number): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}
