/**
 * Bounded Prometheus queries (docs/prometheus-api.md, "Query limits"): the worst queries we know —
 * every series at the finest step, a regex that freezes a backtracking engine, deep nesting,
 * CPU-heavy steps, a query abandoned by its client, many at once — sent to the built `tidemark
 * dashboard` while a live panel streams over its WebSocket. The panel's panes keep arriving with no
 * gap over 1 s, /healthz keeps answering, and each bad query gets its limit's error, counted in
 * /metrics. Real nats-server, real CLI dashboard, real sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { connect } from "@nats-io/transport-node";
import type { Pane } from "@tidemark/engine/protocol";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import { promtoolCheckMetrics } from "../harness/promtool.js";
import { stopGracefully } from "../engine/engine-fixtures.js";
import {
  connectWs,
  createPanesStream,
  pane,
  publishPaneBatch,
  publishPanes,
  type WsClient,
} from "../dashboard/fixtures.js";

const W = 10_000;
const SERVICES = 40;
const WINDOWS = 360; // an hour of 10 s windows per service
const END = Math.floor(Date.now() / W) * W;
const START = END - WINDOWS * W;
const LIMITS = {
  series: 2000,
  samples: 2_000_000,
  responseBytes: 4 * 1024 * 1024,
  timeoutS: 4,
  concurrency: 2,
  queued: 2,
};

/** CPU-heavy, memory-light: each step sorts every sample of the hour of 40 series, 10,000 steps. */
const HEAVY =
  'sum(quantile_over_time(0.5, tidemark_requests{policy="load"}[1h])) + sum(quantile_over_time(0.9, tidemark_requests{policy="load"}[1h]))';

interface Answer {
  status: number;
  body: { status: string; errorType?: string; error?: string; code?: string; data?: { result: unknown[] } };
  ms: number;
}

describe("bounded Prometheus queries under a live panel", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let dash: CliProcess;
  let url: string;
  let ws: WsClient;
  /** Arrival times of the live panel's pane frames, and of /healthz answers (with their latency). */
  const arrivals: number[] = [];
  const health: Array<{ at: number; ms: number; ok: boolean }> = [];
  let feeding = true;
  let feed: Promise<void> = Promise.resolve();
  let probe: Promise<void> = Promise.resolve();

  const query = async (path: string, params: Record<string, string>, signal?: AbortSignal): Promise<Answer> => {
    const t0 = performance.now();
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params).toString(),
      signal,
    });
    const body = (await res.json()) as Answer["body"];
    return { status: res.status, body, ms: performance.now() - t0 };
  };
  const range = (q: string, stepS: number, signal?: AbortSignal) =>
    query(
      "/api/v1/query_range",
      { query: q, start: String(START / 1000), end: String(END / 1000), step: String(stepS) },
      signal,
    );
  const instant = (q: string) => query("/api/v1/query", { query: q, time: String(END / 1000) });
  const metric = async (line: RegExp): Promise<number> =>
    Number(line.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
  const limited = (limit: string) =>
    metric(new RegExp(`^tidemark_dashboard_prom_queries_limited_total\\{limit="${limit}"\\} (\\d+)$`, "m"));

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url, noAsyncTraces: true });
    await createPanesStream(nc);
    for (let s = 0; s < SERVICES; s++) {
      const panes: Pane[] = [];
      for (let k = 0; k < WINDOWS; k++)
        panes.push(
          pane({
            policy: "load",
            service: `svc-${s}`,
            windowMs: W,
            start: START + k * W - W,
            seq: 1,
            kind: "final",
            count: 100 + k,
            errors: k % 7,
          }),
        );
      await publishPaneBatch(nc, `load-${s}`, panes);
    }
    dash = spawnTidemark([
      "dashboard",
      "--port",
      "0",
      "--nats",
      nats.url,
      "--query-max-series",
      String(LIMITS.series),
      "--query-max-samples",
      String(LIMITS.samples),
      "--query-max-response-bytes",
      String(LIMITS.responseBytes),
      "--query-timeout",
      `${LIMITS.timeoutS}s`,
      "--query-max-concurrency",
      String(LIMITS.concurrency),
      "--query-max-queued",
      String(LIMITS.queued),
    ]);
    url = (await dash.ready)["dashboard"] as string;
    await waitFor(
      async () => {
        const a = await instant('sum(count_over_time(tidemark_requests{policy="load"}[2h]))');
        return (
          (a.body.data?.result as Array<{ value: [number, string] }> | undefined)?.[0]?.value[1] ===
          String(SERVICES * WINDOWS)
        );
      },
      60_000,
      "the backfill in the dashboard",
    );
    ws = await connectWs(url);
    await ws.next("hello");
    ws.send({ type: "subscribe", panels: [{ panel: "live", metric: "requests", policy: "live", windowMs: W }] });
    await ws.next("snapshot");
    ws.ws.on("message", (d: Buffer) => {
      if (d.toString("utf8").startsWith('{"type":"panes"')) arrivals.push(performance.now());
    });
    // A pane of the live panel every 100 ms; /healthz every 200 ms.
    feed = (async () => {
      for (let seq = 1; feeding; seq++) {
        await publishPanes(nc, [
          pane({ policy: "live", service: "api", windowMs: W, start: END, seq, kind: "early", count: seq }),
        ]);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    probe = (async () => {
      while (feeding) {
        const t0 = performance.now();
        const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) }).then(
          (r) => r.ok,
          () => false,
        );
        health.push({ at: t0, ms: performance.now() - t0, ok });
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await waitFor(() => arrivals.length >= 3, 10_000, "the live panel streaming");
  }, 120_000);

  afterAll(async () => {
    feeding = false;
    await Promise.all([feed, probe]);
    await ws?.close();
    if (dash) await stopGracefully(dash);
    await nc?.close();
    await nats?.stop();
  });

  /** Runs `work` and asserts the live panel and /healthz kept flowing all through it. */
  async function whileStreaming<T>(work: () => Promise<T>): Promise<T> {
    const from = performance.now();
    const out = await work();
    const to = performance.now();
    await waitFor(
      () => (arrivals.at(-1) ?? 0) > to && (health.at(-1)?.at ?? 0) > to,
      5000,
      "a pane and a /healthz after the work",
    );
    const seen = [from, ...arrivals.filter((t) => t > from && t < to + 1000)];
    const gaps = seen.slice(1).map((t, i) => t - (seen[i] as number));
    expect(Math.max(...gaps), `largest gap between live panes (ms), over ${Math.round(to - from)} ms`).toBeLessThan(
      1000,
    );
    const probes = health.filter((h) => h.at > from && h.at < to);
    expect(
      probes.every((h) => h.ok && h.ms < 1000),
      JSON.stringify(probes.filter((h) => !h.ok || h.ms >= 1000)),
    ).toBe(true);
    return out;
  }

  it("answers a backtracking bomb regex at once, and every series at the finest step with the samples limit", async () => {
    await whileStreaming(async () => {
      const bomb = await instant('{__name__=~"(.|.)*X"}');
      expect(bomb.status).toBe(200);
      expect(bomb.body.data?.result).toEqual([]);
      const all = await range('{__name__=~".+"}', (END - START) / 1000 / 10_000);
      expect(all.status).toBe(422);
      expect(all.body).toMatchObject({ errorType: "execution", code: "TM_PROM_LIMIT" });
      expect(all.body.error).toContain("too many samples");
      expect(all.body.error).toContain("--query-max-samples");
    });
    expect(await limited("samples")).toBe(1);
  });

  it("refuses too many series, a too-large response, and a huge range at a tiny step", async () => {
    await whileStreaming(async () => {
      const every = '{__name__=~".+"}';
      const series = await instant(
        `count(${every}) + count(${every}) + count(${every}) + count(${every}) + count(${every})`,
      );
      expect(series.status).toBe(422);
      expect(series.body.error).toContain("too many series");
      expect(series.body.error).toContain("--query-max-series");
      const big = await range('tidemark_requests{policy="load"}', 0.5);
      expect(big.status).toBe(422);
      expect(big.body.error).toContain(`larger than ${LIMITS.responseBytes} bytes`);
      expect(big.body.error).toContain("--query-max-response-bytes");
      const tiny = await query("/api/v1/query_range", {
        query: "sum(tidemark_requests)",
        start: "0",
        end: String(END / 1000),
        step: "0.1",
      });
      expect(tiny.status).toBe(400);
      expect(tiny.body.error).toContain("exceeded maximum resolution");
    });
    expect(await limited("series")).toBe(1);
    expect(await limited("response_bytes")).toBe(1);
  });

  it("times out a CPU-heavy query with 503 timeout, and stops deep nesting by its bounds", async () => {
    const heavy = HEAVY;
    await whileStreaming(async () => {
      const slow = await range(heavy, (END - START) / 1000 / 10_000);
      expect(slow.status).toBe(503);
      expect(slow.body).toMatchObject({ errorType: "timeout", code: "TM_PROM_TIMEOUT" });
      expect(slow.body.error).toContain("--query-timeout");
      expect(slow.ms).toBeLessThan((LIMITS.timeoutS + 1) * 1000);
      const nested = await instant(
        "max_over_time(max_over_time(max_over_time(sum(tidemark_requests)[1h:1s])[1h:1s])[1h:1s])",
      );
      expect(nested.status).toBe(422);
      expect(nested.body.error).toContain("one evaluation step held the server for more than 500 ms");
      expect(nested.body.error).toContain("--query-max-step-time");
      let deep = "tidemark_requests";
      for (let i = 0; i < 120; i++) deep = `abs(-(${deep}))`; // 241 levels, under the bound
      const deepAnswer = await instant(`sum(${deep})`);
      expect(deepAnswer.status).toBe(200);
      // Past the nesting bound: a 400 at once (the parser's error recovery on it held the loop ~0.6 s).
      const parens = await instant(`${"(".repeat(20_000)}1${")".repeat(20_000)}`);
      expect(parens.status).toBe(400);
      expect(parens.body).toMatchObject({ errorType: "bad_data", code: "TM_PROMQL_PARSE" });
      expect(parens.body.error).toContain("nests deeper than 256 levels");
    });
    expect(await limited("timeout")).toBe(1);
    expect(await limited("step_time")).toBe(1);
  });

  it("stops a query whose client went away, and refuses queries past the queue while others run", async () => {
    const heavy = HEAVY;
    await whileStreaming(async () => {
      const abort = new AbortController();
      const gone = range(heavy, (END - START) / 1000 / 10_000, abort.signal).catch(() => "aborted");
      await waitFor(
        async () => (await metric(/^tidemark_dashboard_prom_queries_running (\d+)$/m)) === 1,
        5000,
        "the query running",
      );
      abort.abort();
      expect(await gone).toBe("aborted");
      await waitFor(async () => (await limited("canceled")) === 1, 2000, "the abandoned query stopped");
      expect(await metric(/^tidemark_dashboard_prom_queries_running (\d+)$/m)).toBe(0);
      const many = await Promise.all(Array.from({ length: 12 }, () => range(heavy, (END - START) / 1000 / 10_000)));
      const codes = many.map((a) => a.body.errorType ?? "success");
      expect(codes.filter((c) => c === "unavailable")).toHaveLength(12 - LIMITS.concurrency - LIMITS.queued);
      for (const a of many.filter((x) => x.body.errorType === "unavailable")) {
        expect(a.status).toBe(503);
        expect(a.body.error).toContain("--query-max-queued");
      }
    });
    expect(await limited("queue")).toBe(12 - LIMITS.concurrency - LIMITS.queued);
  }, 60_000);

  it("keeps /metrics valid for promtool check metrics with every limit's series present", async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const limit of ["series", "samples", "step_time", "response_bytes", "queue", "timeout", "canceled"])
      expect(text).toMatch(
        new RegExp(`^tidemark_dashboard_prom_queries_limited_total\\{limit="${limit}"\\} [1-9]`, "m"),
      );
    const verdict = await promtoolCheckMetrics(text);
    expect(verdict).toEqual({ code: 0, output: "" });
  });
});
