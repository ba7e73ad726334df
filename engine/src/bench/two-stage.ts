/**
 * `node dist/bench/two-stage.js` (part of `npm run bench -w engine`): the two-stage dataflow
 * (docs/decisions/0029-two-stage-dataflow.md) against a real nats-server started here (loopback,
 * temp store, stopped at the end). Engine workers run as child processes (two-stage-worker.ts),
 * so two of them can use both cores; the merge operator runs in this process and shares them.
 *
 * 1. Throughput on one pre-published recording (runtime-setup.ts: the core benchmark's density,
 *    TM_EVENTS written as `tidemark backfill` does), each configuration on fresh output streams and
 *    checkpoint directories, the configurations interleaved, RUNS rounds, medians: the single-stage
 *    baseline (1 worker, partials off, no merge), 1 worker with partials and no merge (what
 *    partials cost a worker), 1 worker + merge and 2 workers (partitions 0-3, 4-7) + merge, timed
 *    until every event is through the workers and the merge, the merge's log time at the
 *    recording's last tick and every pane acknowledged (two-stage-runs.ts).
 * 2. The merge stage's rate: partial batches handled and events merged per second of its busy wall
 *    time (this process's event loop active, performance.eventLoopUtilization: reading, decoding,
 *    aligning, the core and pane publishing; the bench's own 10 ms polls are in it too).
 * 3. Tick alignment p50/p99 (MergeOperator.onTickAligned), over every tick of the rounds.
 * 4. Pipeline lag through both stages, fed live at the demo's rate (two-stage-live.ts).
 * Bounded (~60–90 s). TM_BENCH_TWO_STAGE_EVENTS overrides the recording's size.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { defaultCoreConfig } from "../core/index.js";
import { EVENTS_PER_LOG_SECOND, natsServer, publish, recording, row } from "./runtime-setup.js";
import { liveTwoStage, type LiveRun } from "./two-stage-live.js";
import { replaceSection } from "./benchmarks-section.js";
import { pipelineRun, type PipelineRun, type PipelineSpec } from "./two-stage-runs.js";

const EVENTS = Number(process.env.TM_BENCH_TWO_STAGE_EVENTS ?? 200_000);
const RUNS = 3;
/** `tidemark demo`'s default rate (deploy/src/config/demo-section.ts). */
const DEMO_RATE = 500;
const LIVE_MS = 10_000;

const SINGLE: PipelineSpec = { label: "single-stage", workers: ["all"], partials: false, withMerge: false };
const PARTIALS: PipelineSpec = { label: "1 worker, partials on", workers: ["all"], partials: true, withMerge: false };
const ONE: PipelineSpec = { label: "1 worker + merge", workers: ["all"], partials: true, withMerge: true };
const TWO: PipelineSpec = { label: "2 workers + merge", workers: ["0-3", "4-7"], partials: true, withMerge: true };
const SPECS = [SINGLE, PARTIALS, ONE, TWO];

const progress = (what: string): void => void process.stderr.write(`two-stage bench: ${what}\n`);

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Nearest-rank percentile of the raw values (null when there are none). */
const pct = (xs: readonly number[], q: number): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
};

const perSecond = (n: number, ms: number): string => Math.round(n / (ms / 1000)).toLocaleString("en-US");
const ms = (v: number | null): string => (v === null ? "none" : `${v.toFixed(1)} ms`);
const sec = (v: number): string => `${(v / 1000).toFixed(2)} s`;

/** The median run of one configuration (by wall time). */
function medianRun(runs: readonly PipelineRun[]): PipelineRun {
  const m = median(runs.map((r) => r.ms));
  return runs.reduce((best, r) => (Math.abs(r.ms - m) < Math.abs(best.ms - m) ? r : best));
}

function throughputRows(by: Map<PipelineSpec, PipelineRun[]>, events: number): string[] {
  const t = (s: PipelineSpec): number => median((by.get(s) ?? []).map((r) => r.ms));
  const all = (s: PipelineSpec): string => (by.get(s) ?? []).map((r) => (r.ms / 1000).toFixed(2)).join(" / ");
  const line = (s: PipelineSpec, what: string, note = ""): string =>
    row(what, sec(t(s)), `${perSecond(events, t(s))} events/s; runs ${all(s)} s${note}`);
  const two = medianRun(by.get(TWO) ?? []);
  const split = two.workerEvents.map((n) => n.toLocaleString("en-US")).join(" + ");
  return [
    line(
      SINGLE,
      "baseline: single-stage, 1 worker, partials off, no merge (TM_EVENTS → core → TM_PANES acked)",
      `; engine start ${Math.round(median((by.get(SINGLE) ?? []).map((r) => r.workerStartMs[0] ?? NaN)))} ms of it (median)`,
    ),
    line(PARTIALS, "1 worker, partials on, no merge (every partial batch stored in TM_PARTIALS)"),
    line(ONE, "1 worker + merge: every event through both stages, merged log time at the last tick, acked"),
    line(TWO, "2 workers (partitions 0-3, 4-7) + merge, the same", `; events per worker ${split}`),
    row("  2 workers + merge / 1 worker + merge", `${(t(ONE) / t(TWO)).toFixed(2)}×`, "events/s ratio (medians)"),
    row("  1 worker + merge / single-stage", `${(t(SINGLE) / t(ONE)).toFixed(2)}×`, "events/s ratio (medians)"),
    row(
      "  the cost of partials in a worker: 1 worker partials on / off",
      `${(t(SINGLE) / t(PARTIALS)).toFixed(2)}×`,
      "events/s ratio (medians)",
    ),
    row(
      "  CPU in the median 2-worker run: workers, merge process (this one), nats-server",
      sec(two.workerCpuMs.reduce((a, b) => a + b, 0) + two.mergeCpuMs + two.serverCpuMs),
      `${two.workerCpuMs.map(sec).join(" + ")}, ${sec(two.mergeCpuMs)}, ${sec(two.serverCpuMs)} (${(
        ((two.workerCpuMs.reduce((a, b) => a + b, 0) + two.mergeCpuMs + two.serverCpuMs) / two.ms) *
        100
      ).toFixed(0)}% of one core)`,
    ),
  ];
}

function mergeRows(by: Map<PipelineSpec, PipelineRun[]>): string[] {
  const lines: string[] = [];
  for (const s of [ONE, TWO]) {
    const runs = by.get(s) ?? [];
    const handled = runs.map((r) => Object.values(r.batches).reduce((a, b) => a + b, 0));
    const rates = runs.map((r, i) => (handled[i] as number) / (r.mergeBusyMs / 1000));
    const merged = runs.map((r) => r.mergedEvents / (r.mergeBusyMs / 1000));
    const r = medianRun(runs);
    const outcomes = Object.entries(r.batches)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ");
    lines.push(
      row(
        `merge stage, ${s.label}: partial batches handled / merge busy wall time`,
        `${Math.round(median(rates)).toLocaleString("en-US")}/s`,
        `median of ${rates.map((x) => Math.round(x)).join(" / ")}; median run ${outcomes}, busy ${r.mergeBusyMs.toFixed(0)} ms of ${r.ms.toFixed(0)} ms`,
      ),
      row(
        `  events merged / merge busy wall time`,
        `${Math.round(median(merged) / 1000).toLocaleString("en-US")}k/s`,
        `${r.mergedEvents.toLocaleString("en-US")} events in the median run; merge CPU ${sec(r.mergeCpuMs)}`,
      ),
    );
  }
  for (const s of [ONE, TWO]) {
    const aligned = (by.get(s) ?? []).flatMap((r) => r.aligned);
    lines.push(
      row(
        `tick alignment p50 / p99, ${s.label} (catch-up on the recording)`,
        `${ms(pct(aligned, 0.5))} / ${ms(pct(aligned, 0.99))}`,
        `${aligned.length} ticks over ${RUNS} runs; max ${ms(pct(aligned, 1))}`,
      ),
    );
  }
  return lines;
}

function liveRows(r: LiveRun): string[] {
  const workers = r.workers
    .map((w) => `${w.partitions}: ${ms(w.p50)} / ${ms(w.p99)} (${w.events.toLocaleString("en-US")} events)`)
    .join("; ");
  return [
    row(
      `pipeline lag p50 / p99, both stages, live ${LIVE_MS / 1000} s at ${r.rate} events/s, 2 workers + merge`,
      `${ms(r.merge.p50)} / ${ms(r.merge.p99)}`,
      `the merge's, at each merged tick; fed ${r.sent.toLocaleString("en-US")} events/s, ${r.mergedEvents} of ${r.fed} merged`,
    ),
    row("  each worker's own pipeline lag p50 / p99 in the same run (stage 1 alone)", "", workers),
    row(
      "  tick alignment p50 / p99 in that run",
      `${ms(pct(r.aligned, 0.5))} / ${ms(pct(r.aligned, 0.99))}`,
      `${r.aligned.length} ticks; max ${ms(pct(r.aligned, 1))}`,
    ),
  ];
}

/** Replaces this benchmark's section of engine/BENCHMARKS.md (benchmarks-section.ts). */
function record(lines: readonly string[], loadStart: string): void {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  const section =
    `## Two-stage dataflow\n\nRegenerated by \`node dist/bench/two-stage.js\` (part of \`npm run bench -w engine\`; engine/src/bench/two-stage.ts). ` +
    `Load average at the start: ${loadStart}; at the end: ${load}. Ratios and baselines are measured in the same run.\n\n\`\`\`\n${lines.join("\n")}\n\`\`\`\n\n` +
    `How to read it: workers are child processes (bench/two-stage-worker.ts), the merge operator runs in the benchmark's process; ` +
    `on this 2-core machine two workers, the merge and nats-server share the cores. Each throughput row is timed from the workers' start ` +
    `(the merge already running, idle) until every event is through the workers and the merge, every partition reported to the ` +
    `recording's last tick and every pane acknowledged; the rounds interleave the configurations. The merge's busy wall time is its ` +
    `process's event-loop active time over the run. Tick alignment is each released tick's wall time from its first partial batch ` +
    `to its release (\`tidemark_merge_tick_alignment_seconds\`); with one worker a batch covers every partition, so a tick goes out ` +
    `on arrival. The live rows feed TM_EVENTS as ingest does (bench/live-feed.ts); the merge's lag is wall clock − merged log time ` +
    `when a merged tick is handled, so it includes the 100 ms ticks and the wait for the slower worker.\n`;
  replaceSection("two-stage", section);
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  const dir = mkdtempSync(join(tmpdir(), "tidemark-bench-two-stage-"));
  const nats = await natsServer(dir);
  try {
    const events = recording(EVENTS);
    progress(`nats-server ${nats.url} (pid ${nats.pid}); publishing ${events.length} events`);
    const messages = await publish(nats.url, events, defaultCoreConfig());
    const endTs = messages.at(-1)?.heartbeatTs ?? 0;
    const by = new Map<PipelineSpec, PipelineRun[]>(SPECS.map((s) => [s, []]));
    for (let round = 0; round < RUNS; round++)
      for (const [i, s] of SPECS.entries()) {
        const tag = `r${round}c${i}`;
        const r = await pipelineRun(nats.url, nats.pid, join(dir, tag), tag, s, events.length, endTs);
        by.get(s)?.push(r);
        progress(`round ${round + 1}/${RUNS}: ${s.label} ${sec(r.ms)} (${perSecond(events.length, r.ms)} events/s)`);
      }
    progress(`live: 2 workers + merge, ${LIVE_MS / 1000} s at ${DEMO_RATE} events/s`);
    const live = await liveTwoStage(nats.url, join(dir, "live"), DEMO_RATE, LIVE_MS);
    const lines = [
      `two-stage dataflow benchmark (real nats-server ${nats.url}, 8 partitions, default policies and windows; ` +
        `${events.length} events at ${EVENTS_PER_LOG_SECOND / 1000}k/s of log time; medians of ${RUNS} interleaved runs)`,
      ...throughputRows(by, events.length),
      ...mergeRows(by),
      ...liveRows(live),
    ];
    process.stdout.write(lines.join("\n") + "\n");
    record(lines, loadStart);
    progress(`done in ${sec(Date.now() - started)}`);
  } finally {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
