/**
 * The soak's view of a running `tidemark up`: its roles' PIDs and URLs, each role's resident memory,
 * the engine's pipeline-lag histogram (cumulative buckets from /metrics), the latest tm.status of
 * each worker, and TM_PANES' size. Loopback only; everything started here is stopped by PID.
 */
import { readFileSync } from "node:fs";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { EngineStatusMessage } from "@tidemark/engine/protocol";
import { spawnTidemark, type CliProcess } from "../harness/processes.js";
import { connectNats, metricValue } from "../engine/engine-fixtures.js";

export const LAG_METRIC = "tidemark_engine_pipeline_lag_seconds";

export interface Stack {
  readonly up: CliProcess;
  readonly ready: Record<string, unknown>;
  readonly pids: Record<string, number>;
  readonly nc: NatsConnection;
  /** Latest tm.status per worker. */
  readonly status: Map<string, EngineStatusMessage>;
  stop(): Promise<void>;
}

export async function startStack(dataDir: string, cwd: string): Promise<Stack> {
  const up = spawnTidemark(["up", "--no-demo", "--data", dataDir, "--ingest-port", "0", "--dashboard-port", "0"], {
    cwd,
    readyTimeoutMs: 120_000,
  });
  const ready = await up.ready;
  const nc = await connectNats(String(ready.nats), String(ready.natsToken));
  const status = new Map<string, EngineStatusMessage>();
  const sub = nc.subscribe("tm.status", {
    callback: (_err, m) => {
      const s = JSON.parse(m.string()) as EngineStatusMessage;
      status.set(s.worker, s);
    },
  });
  return {
    up,
    ready,
    pids: ready.pids as Record<string, number>,
    nc,
    status,
    async stop() {
      sub.unsubscribe();
      await nc.close();
      up.child.kill("SIGTERM");
      await up.exited;
    },
  };
}

/** Resident memory of a process, MB (0 once it is gone). */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Cumulative counts of the engine worker's lag histogram, by bucket bound (seconds, as written). */
export type LagBuckets = Map<string, number>;

const BOUNDS = ["0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300", "+Inf"];

export async function lagBuckets(stack: Stack): Promise<LagBuckets> {
  const text = await engineMetrics(stack);
  return new Map(BOUNDS.map((le) => [le, metricValue(text, `${LAG_METRIC}_bucket`, { le }) ?? 0]));
}

export async function engineMetrics(stack: Stack): Promise<string> {
  return (await fetch((stack.ready.engine as { metrics: string }).metrics)).text();
}

/** Checkpoints the engine worker took so far, and the seconds its input was held for them. */
export async function checkpointHolds(stack: Stack): Promise<{ count: number; heldS: number }> {
  const text = await engineMetrics(stack);
  return {
    count: metricValue(text, "tidemark_engine_checkpoint_pause_seconds_count") ?? 0,
    heldS: metricValue(text, "tidemark_engine_checkpoint_pause_seconds_sum") ?? 0,
  };
}

/** The share of events handled between two scrapes within `le` seconds of lag, and how many there were. */
export function shareWithin(before: LagBuckets, after: LagBuckets, le: string): { share: number; events: number } {
  const events = (after.get("+Inf") ?? 0) - (before.get("+Inf") ?? 0);
  const within = (after.get(le) ?? 0) - (before.get(le) ?? 0);
  return { share: events === 0 ? 1 : within / events, events };
}

/** The smallest bucket bound holding 99 % of the events between two scrapes (an upper bound on p99), seconds. */
export function p99Bound(before: LagBuckets, after: LagBuckets): string {
  for (const le of BOUNDS) if (shareWithin(before, after, le).share >= 0.99) return le;
  return "+Inf";
}

export async function panesBytes(nc: NatsConnection): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info("TM_PANES")).state.bytes;
}

/** The engine worker's latest status (not the merge operator's). */
export function workerStatus(stack: Stack): EngineStatusMessage | undefined {
  for (const s of stack.status.values()) if (s.merge === undefined) return s;
  return undefined;
}
