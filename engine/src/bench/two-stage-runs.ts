/**
 * The runs of the two-stage benchmark (two-stage.ts): engine workers as child processes
 * (two-stage-worker.ts, each stopped by its PID) and, when asked, the merge operator in this
 * process, on fresh TM_PANES / TM_LATE / TM_PARTIALS and fresh checkpoint directories.
 */
import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { PARTIAL_TICK_MS, STREAM_LATE, STREAM_PANES, STREAM_PARTIALS } from "../protocol.js";
import { parseMergeConfig } from "../runtime/config/merge-config.js";
import { startMerge, type RunningMerge } from "../runtime/merge/start-merge.js";
import { silentLogger } from "./runtime-lag.js";
import { processCpuMs } from "./runtime-setup.js";
import type { FromWorker, ToWorker, WorkerArgs, WorkerReport, WorkerStatus } from "./two-stage-worker.js";

const ENTRY = fileURLToPath(new URL("./two-stage-worker.js", import.meta.url));
const STOP_TIMEOUT_MS = 10_000;

/** One engine worker in a child process. */
export class WorkerProc {
  status: WorkerStatus | undefined;
  private readonly child: ChildProcess;
  private readonly exited: Promise<unknown>;
  private readonly loaded: Promise<void>;
  private reportWaiter: ((r: WorkerReport) => void) | undefined;
  private failure: string | undefined;

  constructor(readonly args: WorkerArgs) {
    this.child = fork(ENTRY, [JSON.stringify(args)], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
    this.exited = new Promise((r) => this.child.once("exit", r));
    this.loaded = new Promise((resolve, reject) => {
      this.child.on("message", (m: FromWorker) => {
        if (m.type === "loaded") resolve();
        else if (m.type === "status") this.status = m;
        else if (m.type === "report") this.reportWaiter?.(m);
        else if (m.type === "error") reject(new Error((this.failure = `${args.worker}: ${m.message}`)));
      });
      this.child.once("exit", (code) => reject(new Error(`${args.worker} exited (${code}) before it loaded`)));
    });
  }

  get pid(): number {
    return this.child.pid ?? NaN;
  }

  ready(): Promise<void> {
    return this.loaded;
  }

  go(): void {
    this.child.send({ type: "go" } satisfies ToWorker);
  }

  /** Throws if the child said it failed. */
  check(): void {
    if (this.failure !== undefined) throw new Error(this.failure);
  }

  report(): Promise<WorkerReport> {
    return new Promise((resolve) => {
      this.reportWaiter = resolve;
      this.child.send({ type: "report" } satisfies ToWorker);
    });
  }

  /** SIGTERM to its PID, SIGKILL to the same PID if it has not exited within 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    process.kill(this.pid, "SIGTERM");
    const timer = setTimeout(() => process.kill(this.pid, "SIGKILL"), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Deletes TM_PANES, TM_LATE and TM_PARTIALS (the engines recreate them), so no run's publish is an earlier one's duplicate. */
export async function freshOutputStreams(url: string, purgeEvents?: string): Promise<void> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  for (const s of [STREAM_PANES, STREAM_LATE, STREAM_PARTIALS]) await jsm.streams.delete(s).catch(() => false);
  if (purgeEvents !== undefined) await jsm.streams.purge(purgeEvents);
  await nc.close();
}

/** The merge operator in this process, with its tick alignment times collected. */
export async function merge(url: string, data: string, id: string): Promise<{ m: RunningMerge; aligned: number[] }> {
  const config = parseMergeConfig({ env: {}, flags: { nats: url, data, worker: id, "metrics-port": "0" } });
  const m = await startMerge(config, { logger: silentLogger() });
  const aligned: number[] = [];
  const metric = m.operator.output.onTickAligned;
  m.operator.output.onTickAligned = (ms) => {
    metric(ms);
    aligned.push(ms);
  };
  return { m, aligned };
}

/** The merged log time: the smallest end reported over every partition (null until all reported). */
export function mergedLogTime(m: RunningMerge, partitionCount: number): number | null {
  let min = Infinity;
  for (let p = 0; p < partitionCount; p++) min = Math.min(min, m.operator.aligner.reportedEnd(p) ?? -Infinity);
  return Number.isFinite(min) ? min : null;
}

export interface PipelineSpec {
  label: string;
  /** One partition list per worker. */
  workers: string[];
  partials: boolean;
  withMerge: boolean;
}

export interface PipelineRun {
  spec: PipelineSpec;
  ms: number;
  workerEvents: number[];
  /** Each worker's startEngine wall ms (inside `ms`). */
  workerStartMs: number[];
  workerCpuMs: number[];
  /** This process (the merge operator's) user + system CPU during the run. */
  mergeCpuMs: number;
  serverCpuMs: number;
  /** The merge process's event loop: busy (active) wall ms during the run. */
  mergeBusyMs: number;
  batches: Record<string, number>;
  mergedEvents: number;
  aligned: number[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One run on the pre-published recording: the merge (if any) started and idle first, the workers'
 * children loaded, then timed from `go` until every event is through the workers, each worker's
 * log time is at the end-of-recording heartbeat with its panes acknowledged, and (with the merge)
 * the merge has every event, every partition reported to the recording's last tick, no tick
 * held and its panes acknowledged (without the merge: every partial batch acknowledged, so stored).
 */
export async function pipelineRun(
  url: string,
  serverPid: number,
  data: string,
  tag: string,
  spec: PipelineSpec,
  events: number,
  endTs: number,
): Promise<PipelineRun> {
  await freshOutputStreams(url);
  const mg = spec.withMerge ? await merge(url, join(data, "merge"), `merge-${tag}`) : undefined;
  const procs = spec.workers.map(
    (partitions, i) =>
      new WorkerProc({ url, data: join(data, `w${i}`), worker: `${tag}-w${i}`, partitions, partials: spec.partials }),
  );
  try {
    await Promise.all(procs.map((p) => p.ready()));
    const endTick = Math.floor(endTs / PARTIAL_TICK_MS) * PARTIAL_TICK_MS;
    const cpu0 = procs.map((p) => processCpuMs(p.pid));
    const server0 = processCpuMs(serverPid);
    const self0 = process.cpuUsage();
    const elu0: EventLoopUtilization = performance.eventLoopUtilization();
    const t0 = performance.now();
    for (const p of procs) p.go();
    const workersDone = (): boolean =>
      procs.reduce((n, p) => n + (p.status?.events ?? 0), 0) >= events &&
      procs.every((p) => (p.status?.logTime ?? -Infinity) >= endTs && p.status?.inFlight === 0);
    const mergeDone = (): boolean =>
      mg === undefined ||
      (mg.m.operator.eventsTotal >= events &&
        (mergedLogTime(mg.m, 8) ?? -Infinity) >= endTick &&
        mg.m.operator.aligner.waiting === 0 &&
        mg.m.host.panesInFlight === 0);
    const deadline = Date.now() + 60_000;
    for (;;) {
      procs.forEach((p) => p.check());
      if (workersDone() && mergeDone()) {
        if (spec.withMerge || !spec.partials) break;
        if (procs.every((p) => p.status?.partialsUnacked === 0)) break;
      }
      if (Date.now() > deadline) throw new Error(`${spec.label}: not done within 60 s`);
      await sleep(10);
    }
    const ms = performance.now() - t0;
    const elu = performance.eventLoopUtilization(elu0);
    const self = process.cpuUsage(self0);
    const op = mg?.m.operator;
    return {
      spec,
      ms,
      workerEvents: procs.map((p) => p.status?.events ?? 0),
      workerStartMs: procs.map((p) => p.status?.startMs ?? NaN),
      workerCpuMs: procs.map((p, i) => processCpuMs(p.pid) - (cpu0[i] as number)),
      mergeCpuMs: (self.user + self.system) / 1000,
      serverCpuMs: processCpuMs(serverPid) - server0,
      mergeBusyMs: elu.active,
      batches: op ? { ...op.batches } : {},
      mergedEvents: op?.eventsTotal ?? 0,
      aligned: mg?.aligned ?? [],
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await mg?.m.close();
  }
}
