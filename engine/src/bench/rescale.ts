/**
 * `node dist/bench/rescale.js` (part of `npm run bench -w engine`): restoring at another parallelism
 * (docs/decisions/0057-elastic-workers.md) — restore time against state size with 1, 2 and 4
 * workers. For each state size, the final checkpoints of a layout of W₀ workers (8 partitions,
 * `services` × 100 routes, one event each: open-states.ts's events, split by partition) are
 * written to a temp data directory; then every worker of a layout of W workers takes the restore
 * step an engine takes (planRestore: every operator's headers read, the cut chosen, its files
 * verified, its state put together), timed, median of RUNS. Baseline, in the same run: the same
 * layout restarting (W₀ → W₀, the store's own choice and one restoreCore), which is what a restart
 * cost before rescaling existed. Workers restore side by side, each in its own process: "slowest"
 * is the rescaled dataflow's restore wall time on enough cores, "sum" its CPU on one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createCore, restoreCore } from "../core/create-core.js";
import type { StreamCore } from "../core/types.js";
import { partitionOf } from "../protocol.js";
import { checkpointHeader } from "../runtime/checkpoint/checkpoint-frame.js";
import { CheckpointStore } from "../runtime/checkpoint/checkpoint-store.js";
import { planRestore } from "../runtime/checkpoint/restore-plan.js";
import { workerStateFrame } from "../runtime/checkpoint/state-frames.js";
import { planWorkerCut } from "../runtime/checkpoint/worker-cut.js";
import { parseEngineConfig, type EngineConfig } from "../runtime/config/config.js";
import { formatPartitionList } from "../runtime/input/partition-list.js";
import { replaceSection } from "./benchmarks-section.js";
import { gc } from "./heap.js";
import { OPEN_STATES_AT, openStateEvents } from "./open-states.js";
import { row } from "./runtime-setup.js";

const P = 8;
const SIZES = (process.env.TM_BENCH_RESCALE_SERVICES ?? "200,800,2000").split(",").map(Number);
const RUNS = 3;
/** (written by, restored by) worker counts; the first is the baseline. */
const MOVES: ReadonlyArray<[number, number]> = [
  [1, 1],
  [1, 2],
  [1, 4],
  [4, 4],
  [4, 1],
  [4, 2],
];
const cores = { create: createCore, restore: restoreCore };
const silent = pino({ level: "silent" });

/** Worker i of n over P partitions: a contiguous range (as `tidemark up --workers n`). */
function range(n: number, i: number): number[] {
  const from = Math.floor((i * P) / n);
  const to = Math.floor(((i + 1) * P) / n) - 1;
  return Array.from({ length: to - from + 1 }, (_, k) => from + k);
}

function configOf(data: string, partitions: number[]): EngineConfig {
  return parseEngineConfig({ flags: { data, partitions: formatPartitionList(partitions), partials: "off" } });
}

/** Final checkpoints of `n` workers holding `services` × 100 routes between them. */
async function writeLayout(data: string, n: number, services: number): Promise<{ bytes: number; aggregates: number }> {
  const workers = Array.from({ length: n }, (_, i) => {
    const config = configOf(data, range(n, i));
    return { config, core: createCore(config.core) as StreamCore };
  });
  const out = { pane: () => undefined, late: () => undefined };
  for (const e of openStateEvents(services)) {
    const p = partitionOf(e.service, P);
    const w = workers.find((x) => x.config.partitions.includes(p)) as (typeof workers)[number];
    w.core.event(w.config.partitions.indexOf(p), e, out);
  }
  let bytes = 0;
  let aggregates = 0;
  for (const { config, core } of workers) {
    const store = new CheckpointStore(config.checkpointDir, 1);
    await store.open();
    const offsets = config.partitions.map(() => ({
      lastSeq: 1_000,
      partialSeq: 0,
      partialCount: 0,
      logTime: OPEN_STATES_AT,
    }));
    const owner = { operatorId: config.worker, partitionCount: P, partitions: config.partitions };
    const header = checkpointHeader(owner, OPEN_STATES_AT, Date.now(), { offsets }, undefined, true);
    bytes += (await store.write({ header, snapshot: core.snapshot() })).bytes;
    aggregates += core.status().stateKeys;
  }
  return { bytes, aggregates };
}

/** Each worker of an `n`-worker layout restoring, timed alone: median of RUNS per worker. */
async function restoreLayout(data: string, n: number): Promise<{ slowest: number; sum: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const config = configOf(data, range(n, i));
    const runs: number[] = [];
    for (let k = 0; k < RUNS; k++) {
      gc();
      const t0 = performance.now();
      const plan = await planRestore(config, undefined, workerStateFrame, silent, undefined, (f, check, c) =>
        planWorkerCut(config, f ?? cores, check, silent, c),
      );
      runs.push(performance.now() - t0);
      if (plan.restored === null) throw new Error(`${config.worker} restored nothing`);
    }
    times.push([...runs].sort((a, b) => a - b)[Math.floor(RUNS / 2)] as number);
  }
  return { slowest: Math.max(...times), sum: times.reduce((a, b) => a + b, 0) };
}

async function main(): Promise<void> {
  const loadStart = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  const lines: string[] = [];
  // A warm-up round (discarded): the first restores run unoptimized code.
  const warm = mkdtempSync(join(tmpdir(), "tm-rescale-bench-"));
  await writeLayout(warm, 4, SIZES[0] as number);
  await restoreLayout(warm, 1);
  await restoreLayout(warm, 4);
  rmSync(warm, { recursive: true, force: true });
  for (const services of SIZES) {
    let baseline = NaN;
    for (const [from, to] of MOVES) {
      const data = mkdtempSync(join(tmpdir(), "tm-rescale-bench-"));
      try {
        const { bytes, aggregates } = await writeLayout(data, from, services);
        const t = await restoreLayout(data, to);
        if (from === 1 && to === 1) {
          baseline = t.slowest;
          lines.push(`${services * 100} keys (${aggregates} aggregates, checkpoints ${(bytes / 1e6).toFixed(1)} MB)`);
        }
        const label =
          from === to
            ? `${from} → ${to} worker${to > 1 ? "s" : ""} (same layout)`
            : `${from} → ${to} worker${to > 1 ? "s" : ""}`;
        const value = `${t.slowest.toFixed(0)} ms`;
        lines.push(
          row(
            `  ${label}: slowest worker`,
            value,
            `×${(t.slowest / baseline).toFixed(2)} of 1 → 1; sum over workers ${t.sum.toFixed(0)} ms`,
          ),
        );
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    }
    console.log(lines.slice(-MOVES.length - 1).join("\n"));
  }
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
  replaceSection(
    "rescale",
    `## Restore at another parallelism\n\nRegenerated by \`node dist/bench/rescale.js\` (part of \`npm run bench -w engine\`; engine/src/bench/rescale.ts). ` +
      `Load average at the start: ${loadStart}; at the end: ${load}. Each row is the median of ${RUNS} restores per worker, the baseline measured in the same run.\n\n` +
      `\`\`\`\n${lines.join("\n")}\n\`\`\`\n\n` +
      `How to read it: a worker restoring partitions another layout wrote restores each old worker's whole core that holds any of them ` +
      `(a group, docs/decisions/0057-elastic-workers.md), so a split costs every new worker about the old worker's restore, and a gather costs ` +
      `the one worker about the old workers' restores together; workers restore side by side in their own processes, so the slowest worker is ` +
      `the dataflow's restore wall time on enough cores.\n`,
  );
}

await main();
