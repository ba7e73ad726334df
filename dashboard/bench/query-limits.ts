/**
 * Query limits benchmark (`npm run bench -w @tidemark/dashboard`; docs/prometheus-api.md, "Query
 * limits"). Two claims, each as a ratio to a baseline measured in the same run:
 * 1. A backtracking bomb regex, `(.|.)*X` against a label value without an X: RE2 (the matcher)
 *    against the baseline of RE2 matching `.+`, and JavaScript's RegExp (what the matcher was).
 * 2. The event loop during a CPU-heavy range query: the longest gap between 1 ms timer ticks while
 *    `/api/v1/query_range` runs (it yields between steps), while the same query is evaluated in one
 *    synchronous call (what it was), and idle for as long (the baseline).
 */
import Fastify from "fastify";
import { RE2JS } from "re2js";
import { resolveConfig } from "../server/config.js";
import { PaneSamples } from "../server/prom/pane-samples.js";
import { promApi } from "../server/prom/prom-api.js";
import { evaluateRange, matcher, parsePromql } from "../server/promql/index.js";
import type { Pane } from "@tidemark/engine/protocol";

const W = 10_000;
const T0 = 1_800_000_000_000;
const SERVICES = 40;
const WINDOWS = 360;
const HEAVY = 'sum(quantile_over_time(0.5, tidemark_requests{policy="dashboard"}[1h]))';

function pane(service: string, start: number, count: number): Pane {
  return {
    id: `dashboard|${service}|${W}|${start}`,
    seq: 0,
    kind: "final",
    policy: "dashboard",
    key: { service },
    window: { start, end: start + W },
    value: { count, errors: 1, errorRate: 1 / count, p50: 21, p90: 88, p95: 131, p99: 412, p999: 801, users: 311 },
    watermark: start + W,
    emittedAt: start + W + 2000,
    emitDelayMs: 2000,
    pipelineLagMs: 40,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
  };
}

function ms(fn: () => unknown, runs = 5): number {
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

function regexRows(): void {
  const value = "a".repeat(24);
  const baseline = ms(() => RE2JS.compile("^(?s:.+)$").matches(value));
  const re2 = ms(() => matcher("__name__", "=~", "(.|.)*X").test(value));
  const js = ms(() => /^(?:(.|.)*X)$/s.test(value), 1);
  console.log(`regex on a 24-character value: baseline RE2 .+ ${baseline.toFixed(3)} ms`);
  console.log(`  RE2 (.|.)*X: ${re2.toFixed(3)} ms (${(re2 / baseline).toFixed(1)}× baseline)`);
  console.log(`  JavaScript RegExp (.|.)*X: ${js.toFixed(1)} ms (${(js / baseline).toFixed(0)}× baseline)`);
}

/** Runs `work` while a 1 ms interval ticks; the longest gap between ticks (or to the end), ms. */
async function longestGap(work: () => Promise<unknown>): Promise<{ gap: number; wall: number }> {
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await work();
  const wall = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(timer);
  return { gap: Math.max(gap, performance.now() - last), wall };
}

async function loopRows(): Promise<void> {
  const samples = new PaneSamples({ windowsPerSeries: WINDOWS, maxWindows: 100_000, discardingPolicies: [] });
  for (let s = 0; s < SERVICES; s++)
    for (let k = 0; k < WINDOWS; k++) samples.apply(pane(`svc-${s}`, T0 + k * W, 100 + ((k * 7 + s * 13) % 400)));
  const app = Fastify();
  await app.register(promApi(resolveConfig({}), samples));
  await app.ready();
  const range = { startMs: T0 + W, endMs: T0 + WINDOWS * W, stepMs: 1000 };
  const q = new URLSearchParams({
    query: HEAVY,
    start: String(range.startMs / 1000),
    end: String(range.endMs / 1000),
    step: "1",
  });
  const yielding = await longestGap(async () => {
    const res = await app.inject({ url: `/api/v1/query_range?${q}` });
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
  });
  const sync = await longestGap(async () => evaluateRange(parsePromql(HEAVY), samples, range));
  const idle = await longestGap(() => new Promise((r) => setTimeout(r, yielding.wall)));
  console.log(`event loop during ${HEAVY}, ${SERVICES} series, 1 h at step 1s:`);
  console.log(`  baseline, idle for as long: longest gap ${idle.gap.toFixed(1)} ms`);
  console.log(
    `  /api/v1/query_range (yields): ${yielding.wall.toFixed(0)} ms, longest gap ${yielding.gap.toFixed(1)} ms (${(yielding.gap / idle.gap).toFixed(1)}× baseline)`,
  );
  console.log(
    `  one synchronous evaluation: ${sync.wall.toFixed(0)} ms, longest gap ${sync.gap.toFixed(1)} ms (${(sync.gap / idle.gap).toFixed(1)}× baseline)`,
  );
  await app.close();
}

regexRows();
await loopRows();
