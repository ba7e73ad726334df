/**
 * Fan-out benchmark (`npm run bench -w @tidemark/dashboard`): the server's cost of delivering
 * panes to many WebSocket clients, without the network. Each client is a socket that counts the
 * bytes it is given. Compared in the same run with a baseline that stringifies every frame for
 * every client (what "no JSON twice" avoids). Prints its numbers; takes a few seconds.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { resolveConfig } from "../server/config.js";
import { createFanout } from "../server/fanout.js";
import { dashboardMetrics } from "../server/metrics.js";

const CLIENTS = Number(process.env["BENCH_CLIENTS"] ?? 50);
const PANES = Number(process.env["BENCH_PANES"] ?? 20_000);
const SERVICES = 20;

function makePanes(): Array<{ pane: Pane; json: string }> {
  const out: Array<{ pane: Pane; json: string }> = [];
  for (let i = 0; i < PANES; i++) {
    const service = `svc-${i % SERVICES}`;
    const start = Math.floor(i / SERVICES) * 10_000;
    const pane: Pane = {
      id: `dashboard|${service}|10000|${start}`,
      seq: 0,
      kind: "on-time",
      policy: "dashboard",
      key: { service },
      window: { start, end: start + 10_000 },
      value: {
        count: 1000 + i,
        errors: i % 37,
        errorRate: (i % 37) / (1000 + i),
        p50: 21.5,
        p90: 88.2,
        p95: 130.9,
        p99: 412.7,
        p999: 801.3,
        users: 311,
      },
      watermark: start + 10_000,
      emittedAt: start + 12_000,
      emitDelayMs: 2000,
      pipelineLagMs: 41,
      lateAccepted: 3,
      dropped: 1,
      bias: { countPct: 6.4, errorRatePp: -1.5, p99Pct: -8.2, usersPct: 3.1, windows: 30 },
    };
    out.push({ pane, json: JSON.stringify(pane) });
  }
  return out;
}

async function fanoutRun(panes: ReadonlyArray<{ pane: Pane; json: string }>): Promise<{ ms: number; bytes: number }> {
  const config = resolveConfig({ logLevel: "silent", sendBufferBytes: 1 << 30 });
  const fanout = createFanout(config, dashboardMetrics());
  let bytes = 0;
  const socket = {
    bufferedAmount: 0,
    readyState: 1,
    send: (d: string) => void (bytes += d.length),
    close: () => undefined,
  };
  for (let c = 0; c < CLIENTS; c++)
    fanout.hub.attach(socket).subscribe([{ panel: "p", metric: "requests", policy: "dashboard", windowMs: 10_000 }]);
  await new Promise((r) => setImmediate(r));
  bytes = 0;
  const t0 = performance.now();
  for (let i = 0; i < panes.length; i += 100) {
    for (const p of panes.slice(i, i + 100)) fanout.sink.pane(p.pane, p.json);
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setImmediate(r));
  const ms = performance.now() - t0;
  fanout.close();
  return { ms, bytes };
}

/** Baseline: each client's frames stringified for that client (panes already parsed, as in the dashboard run). */
async function baselineRun(panes: ReadonlyArray<{ pane: Pane; json: string }>): Promise<{ ms: number; bytes: number }> {
  let bytes = 0;
  let rev = 0;
  const t0 = performance.now();
  for (let i = 0; i < panes.length; i += 100) {
    const batch = panes.slice(i, i + 100).map((p) => ({ rev: ++rev, pane: p.pane }));
    for (let c = 0; c < CLIENTS; c++) bytes += JSON.stringify({ type: "panes", panes: batch }).length;
    await new Promise((r) => setImmediate(r));
  }
  return { ms: performance.now() - t0, bytes };
}

const panes = makePanes();
await fanoutRun(panes.slice(0, 2000));
await baselineRun(panes.slice(0, 2000));
const splice = await fanoutRun(panes);
const naive = await baselineRun(panes);
const rate = (r: { ms: number }): string =>
  `${Math.round((PANES * CLIENTS) / (r.ms / 1000)).toLocaleString("en-US")} pane deliveries/s`;
console.log(`fan-out of ${PANES.toLocaleString("en-US")} panes to ${CLIENTS} clients (no network, one core):`);
console.log(
  `  dashboard (pane JSON spliced into frames): ${splice.ms.toFixed(0)} ms, ${rate(splice)}, ${(splice.bytes / 1e6).toFixed(1)} MB`,
);
console.log(
  `  baseline (frames stringified per client):  ${naive.ms.toFixed(0)} ms, ${rate(naive)}, ${(naive.bytes / 1e6).toFixed(1)} MB`,
);
console.log(`  ratio: ${(naive.ms / splice.ms).toFixed(1)}x faster than the baseline`);
