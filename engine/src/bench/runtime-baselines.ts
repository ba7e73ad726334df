/**
 * The runtime benchmark's baselines (runtime.ts, 1.), each on the same events or messages as the
 * engine run: the core alone on the decoded events, the input path alone (8 ordered consumers,
 * decode, merge; no core), a bare read (the same consumers decoding, nothing else) and decoding the
 * same batches in memory.
 */
import { connect } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { createCore, type CoreConfig, type CoreOutput } from "../core/index.js";
import {
  HEARTBEAT_HEADER,
  STREAM_EVENTS,
  decodeEventBatch,
  eventsSubject,
  partitionOf,
  type TelemetryEvent,
} from "../protocol.js";
import type { BackfillMessage } from "../runtime/backfill/backfill-plan.js";
import { PartitionInterleave } from "../runtime/input/partition-interleave.js";
import { PartitionSource } from "../runtime/input/partition-source.js";
import { processCpuMs } from "./runtime-setup.js";

/** Feeds a fresh core every event, then the end-of-recording heartbeat on each partition. */
export function feedCore(events: readonly TelemetryEvent[], core: CoreConfig, endTs: number, out: CoreOutput): void {
  const c = createCore(core);
  for (const e of events) c.event(partitionOf(e.service, core.partitions), e, out);
  for (let p = 0; p < core.partitions; p++) c.heartbeat(p, endTs, out);
}

/**
 * The events as the engine holds them: decoded from the very batches published to TM_EVENTS (objects
 * made batch by batch, strings shared within a batch), in `events`' order (each partition's batches
 * keep its events in order). What `coreAlone` should be fed to measure the core on the engine's input;
 * simulate()'s own objects are laid out in generation order, not arrival order.
 */
export function decodedInOrder(
  events: readonly TelemetryEvent[],
  messages: readonly BackfillMessage[],
  partitions: number,
): TelemetryEvent[] {
  const queues: TelemetryEvent[][] = Array.from({ length: partitions }, () => []);
  for (const m of messages) if (m.heartbeatTs === undefined) queues[m.partition]?.push(...decodeEventBatch(m.body));
  const next = new Array<number>(partitions).fill(0);
  return events.map((e) => {
    const p = partitionOf(e.service, partitions);
    const i = next[p] as number;
    next[p] = i + 1;
    const d = queues[p]?.[i];
    if (d === undefined || d.ts !== e.ts || d.user !== e.user)
      throw new Error(`decoded events differ from the published at partition ${p}`);
    return d;
  });
}

export function coreAlone(
  events: readonly TelemetryEvent[],
  core: CoreConfig,
  endTs: number,
): { ms: number; panes: number; late: number } {
  let panes = 0;
  let late = 0;
  const out = { pane: () => void panes++, late: () => void late++ };
  const t0 = performance.now();
  feedCore(events, core, endTs, out);
  return { ms: performance.now() - t0, panes, late };
}

/** The engine's input path alone: 8 ordered consumers, decoding, the merge; no core, no panes. */
export async function inputPath(url: string, events: number): Promise<number> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const js = jetstream(nc);
  const merge = new PartitionInterleave(8);
  let released = 0;
  const sink = { event: () => void released++, heartbeat: () => undefined, done: () => undefined };
  let done: () => void = () => undefined;
  const finished = new Promise<void>((r) => (done = r));
  const t0 = performance.now();
  const sources = Array.from(
    { length: 8 },
    (_, p) =>
      new PartitionSource(js, p, 0, {
        message: (seq, evs, hb) => {
          merge.push(p, seq, evs, hb);
          merge.drain(sink);
          if (released >= events) done();
        },
        backpressure: () => undefined,
        problem: (what) => process.stderr.write(`${what}\n`),
      }),
  );
  for (const s of sources) s.start();
  await finished;
  const ms = performance.now() - t0;
  await Promise.all(sources.map((s) => s.stop()));
  await nc.close();
  return ms;
}

export interface BareRead {
  ms: number;
  /** This process's CPU (user + system, all threads), ms. */
  cpuMs: number;
  /** nats-server's CPU over the read, ms (NaN without /proc). */
  serverCpuMs: number;
}

/**
 * The bare read: the same 8 ordered consumers (same filter and pull size as PartitionSource) over
 * the same messages, each event batch decoded, nothing else: what any reader of TM_EVENTS pays,
 * in wall time and in CPU, this process's and nats-server's (delivering the messages).
 */
export async function bareRead(url: string, events: number, serverPid: number): Promise<BareRead> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const js = jetstream(nc);
  let decoded = 0;
  const server0 = processCpuMs(serverPid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const readers = Array.from({ length: 8 }, async (_, p) => {
    const consumer = await js.consumers.get(STREAM_EVENTS, {
      filter_subjects: eventsSubject(p),
      deliver_policy: DeliverPolicy.All,
    });
    const messages = await consumer.consume({ max_messages: 128, expires: 2000 });
    return {
      messages,
      done: (async () => {
        for await (const m of messages) {
          if (!m.headers?.get(HEARTBEAT_HEADER)) decoded += decodeEventBatch(m.data).length;
          if (decoded >= events) break;
        }
      })(),
    };
  });
  const open = await Promise.all(readers);
  await Promise.race(open.map((r) => r.done));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const serverCpuMs = processCpuMs(serverPid) - server0;
  await Promise.all(open.map((r) => r.messages.close().catch(() => undefined)));
  await nc.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs };
}

/**
 * The fastest of `runs` bare reads (each a fresh connection and fresh consumers): one read of a
 * few hundred ms varies up to 3× from run to run with when the consumers' first pulls are answered,
 * and a baseline is the least its work takes.
 */
export async function bestBareRead(url: string, events: number, serverPid: number, runs = 3): Promise<BareRead> {
  let best: BareRead | undefined;
  for (let i = 0; i < runs; i++) {
    const r = await bareRead(url, events, serverPid);
    if (best === undefined || r.ms < best.ms) best = r;
  }
  return best as BareRead;
}

export function decodeOnly(messages: readonly BackfillMessage[]): number {
  const t0 = performance.now();
  let n = 0;
  for (const m of messages) if (m.heartbeatTs === undefined) n += decodeEventBatch(m.body).length;
  if (n === 0) throw new Error("nothing decoded");
  return performance.now() - t0;
}
