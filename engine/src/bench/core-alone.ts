/**
 * The core alone on the held-out workload (runtime-held-out.ts: 300k events, 16 services × 20
 * routes, 20k users, 30 s of event time) fed the engine's input: the events decoded from the very
 * batches the held-out run publishes, in arrival order (runtime-baselines.ts, `decodedInOrder`),
 * then the end-of-recording heartbeat (docs/decisions/0048-core-hot-path.md). No NATS: what
 * state-targets.ts and core-profile.ts print (docs/decisions/0050-state-layout.md).
 */
import { defaultCoreConfig, simulate, type CoreConfig } from "../core/index.js";
import type { TelemetryEvent } from "../protocol.js";
import { BackfillPlan } from "../runtime/backfill/backfill-plan.js";
import { coreAlone, decodedInOrder } from "./runtime-baselines.js";
import { HELD_OUT } from "./runtime-held-out.js";

export interface HeldOutInput {
  /** simulate()'s events in arrival order. */
  events: TelemetryEvent[];
  /** The same events decoded from the published batches (the engine's input). */
  decoded: TelemetryEvent[];
  /** The end-of-recording heartbeat, as the held-out run publishes it (BackfillPlan's rule). */
  endTs: number;
  config: CoreConfig;
}

export function heldOutInput(): HeldOutInput {
  const events = simulate(HELD_OUT).sort((a, b) => a.ingest_ts - b.ingest_ts);
  const config = defaultCoreConfig();
  const plan = new BackfillPlan({ partitions: config.partitions, runId: "core-alone" });
  const messages = [...events.flatMap((e) => plan.push(e)), ...plan.end(config)];
  const endTs = messages.at(-1)?.heartbeatTs ?? 0;
  return { events, decoded: decodedInOrder(events, messages, config.partitions), endTs, config };
}

export interface CoreAloneTimes {
  events: number;
  /** Median wall and CPU (this process, all threads) of the timed runs, ms. */
  medianMs: number;
  medianCpuMs: number;
  /** Least CPU of the timed runs, ms. */
  bestCpuMs: number;
  panes: number;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** One untimed run (the code optimized), then `runs` timed runs on fresh cores over the decoded events. */
export function coreAloneTimes(input: HeldOutInput, runs = 5): CoreAloneTimes {
  const { decoded, config, endTs } = input;
  let panes = coreAlone(decoded, config, endTs).panes;
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const r = coreAlone(decoded, config, endTs);
    const c = process.cpuUsage(c0);
    wall.push(r.ms);
    cpu.push((c.user + c.system) / 1000);
    panes = r.panes;
  }
  return {
    events: decoded.length,
    medianMs: median(wall),
    medianCpuMs: median(cpu),
    bestCpuMs: Math.min(...cpu),
    panes,
  };
}
