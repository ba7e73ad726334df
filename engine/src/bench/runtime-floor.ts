/**
 * The engine's floor (runtime.ts, "Throughput"; docs/decisions/0027-engine-floor.md): the work an
 * engine run cannot leave out, each part measured apart in the same run, and the best
 * engine / core-alone ratio those parts allow. The parts: the core writing the JSON of every pane
 * and late record it emits (EmitGroups as its output, as the engine writes them, cut into as many
 * bodies as the engine's run sent; its excess over the core-alone baseline is the JSON), decoding
 * the event batches (the in-memory baseline), and publishing those bodies to a fresh TM_PANES /
 * TM_LATE (PaneSink, every message acknowledged, an ack round every PACE bodies), with this
 * process's CPU and nats-server's CPU over that publish.
 *
 * Two bounds follow, printed against the core alone and against the bare read. On one thread the
 * engine takes at least the sum of its parts. With every part spread perfectly over the machine's
 * cores (nats-server included: it runs here too), it takes at least the parts' CPU divided by the
 * cores, and never less than the core alone. Neither counts reading from NATS, the merge, timers,
 * checkpoints or status: real runs are slower than both. The budget rows last count the read too
 * (budgetRows).
 */
import { availableParallelism } from "node:os";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { createCore, type CoreConfig } from "../core/index.js";
import { JsonLines, partitionOf, type LateRecord, type Pane, type TelemetryEvent } from "../protocol.js";
import { BodyBuffers } from "../runtime/output/body-buffers.js";
import { EmitGroup, type GroupMessage } from "../runtime/output/emit-group.js";
import { MAX_IN_FLIGHT_BYTES, PaneSink } from "../runtime/output/pane-sink.js";
import { ensureStream, lateStreamSpec, panesStreamSpec } from "../nats/index.js";
import { feedCore, type BareRead } from "./runtime-baselines.js";
import { encodingRows } from "./runtime-encoding.js";
import { deletePaneStreams, processCpuMs, row } from "./runtime-setup.js";

export interface FloorInput {
  url: string;
  /** nats-server's process id (its CPU is read from /proc; NaN elsewhere). */
  serverPid: number;
  events: readonly TelemetryEvent[];
  core: CoreConfig;
  endTs: number;
  /** The baselines measured in the same run, ms. */
  coreAloneMs: number;
  decodeMs: number;
  bareRead: BareRead;
  /** Messages the engine's run published: the records are cut into as many bodies. */
  engineMessages: number;
}

/**
 * The core with the engine's body writing as its output (binary, ADR 0047; no NATS): a new EmitGroup every run of
 * events that makes as many groups as the engine's run sent messages, each sealed after its
 * events. The writers' buffers are reused as the engine reuses them (BodyBuffers): each body is
 * copied out into an arena, for the publish part, and its buffer given back at once; with `keep`
 * false nothing is copied or kept (the engine's work alone: it publishes from the buffer).
 */
export function coreWritingBodies(
  input: Pick<FloorInput, "events" | "core" | "endTs" | "engineMessages">,
  keep = true,
): {
  messages: GroupMessage[];
  records: number;
  ms: number;
} {
  const c = createCore(input.core);
  const buffers = new BodyBuffers();
  const arena = new Arena();
  const messages: GroupMessage[] = [];
  let records = 0;
  const send = (m: GroupMessage): void => {
    if (keep) messages.push({ ...m, body: arena.copy(m.body) });
    if (m.body.byteOffset === 0) buffers.give(m.body.buffer as ArrayBuffer);
    records += m.records;
  };
  const per = Math.max(1, Math.ceil(input.events.length / Math.max(1, input.engineMessages)));
  const t0 = performance.now();
  let g = new EmitGroup(0, 0, send, () => 0, undefined, buffers);
  input.events.forEach((e, i) => {
    if (i > 0 && i % per === 0) {
      g.seal();
      g = new EmitGroup(0, i, send, () => 0, undefined, buffers);
    }
    c.event(partitionOf(e.service, input.core.partitions), e, g);
  });
  for (let p = 0; p < input.core.partitions; p++) c.heartbeat(p, input.endTs, g);
  g.seal();
  return { messages, records, ms: performance.now() - t0 };
}

/** Bodies kept for the publish part, copied into large blocks (no buffer per body). */
class Arena {
  private block = new Uint8Array(0);
  private used = 0;

  copy(body: Uint8Array): Uint8Array {
    if (this.used + body.length > this.block.length) {
      this.block = new Uint8Array(Math.max(8 * 1024 * 1024, body.length));
      this.used = 0;
    }
    const at = this.block.subarray(this.used, this.used + body.length);
    at.set(body);
    this.used += body.length;
    return at;
  }
}

/** The core's records kept, then their JSON written apart from it: by JsonLines, and by JSON.stringify. */
function jsonApart(input: FloorInput): { ms: number; stringifyMs: number; kept: Array<Pane | LateRecord> } {
  const kept: Array<Pane | LateRecord> = [];
  feedCore(input.events, input.core, input.endTs, {
    pane: (p) => void kept.push(p),
    late: (r) => void kept.push(r),
  });
  const lines = new JsonLines(256 * 1024);
  const t0 = performance.now();
  for (const r of kept) {
    lines.add(r);
    if (lines.length > 192 * 1024) lines.reset();
  }
  const ms = performance.now() - t0;
  let units = 0;
  const t1 = performance.now();
  for (const r of kept) units += JSON.stringify(r).length;
  if (units === 0) throw new Error("nothing written");
  return { ms, stringifyMs: performance.now() - t1, kept };
}

/** Bodies published between two ack rounds in the publish part. */
const PACE = 16;

export async function publishAll(
  url: string,
  serverPid: number,
  messages: readonly GroupMessage[],
): Promise<{ ms: number; cpuMs: number; serverCpuMs: number }> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  await deletePaneStreams(jsm);
  for (const spec of [panesStreamSpec(), lateStreamSpec()]) await ensureStream(jsm, spec);
  const sink = new PaneSink(nc, { limits: { messages: 1024, bytes: MAX_IN_FLIGHT_BYTES } });
  const server0 = processCpuMs(serverPid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // Paced: an ack round every PACE bodies, so the socket drains between bodies as it does between
  // the engine's groups (sent all at once, the client's queued copies cost several times the CPU).
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as GroupMessage;
    if (sink.saturated) await sink.room();
    sink.publish(m.subject, m.body, m.msgId);
    if (i % PACE === PACE - 1) await sink.flush();
  }
  await sink.flush();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const serverCpuMs = processCpuMs(serverPid) - server0;
  sink.close();
  await nc.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs };
}

export async function floorRows(input: FloorInput): Promise<string[]> {
  const json = coreWritingBodies(input);
  const apart = jsonApart(input);
  const encodings = encodingRows(apart.kept, input.engineMessages);
  const bytes = json.messages.reduce((n, m) => n + m.body.length, 0);
  const pub = await publishAll(input.url, input.serverPid, json.messages);
  const oneThread = json.ms + input.decodeMs + pub.cpuMs;
  const cores = availableParallelism();
  const spread = (oneThread + pub.serverCpuMs) / cores;
  // The same with the JSON free: only the core, the decode and the bytes' publishing.
  const bytesOnly = (input.coreAloneMs + input.decodeMs + pub.cpuMs + pub.serverCpuMs) / cores;
  const best = (ms: number): string => bestOfCore(input, ms);
  const bare = (ms: number): string => bestOfBare(input, ms);
  return [
    row("  floor: what an engine run cannot leave out, each part measured apart (docs/decisions/0027)", "", ""),
    row(
      "    the core writing its pane and late bodies, binary (EmitGroups as its output, no NATS; ADR 0047)",
      sec(json.ms),
      `${json.records.toLocaleString("en-US")} records, ${(bytes / 1e6).toFixed(1)} MB in ${json.messages.length} bodies; bodies ${sec(json.ms - input.coreAloneMs)} over the core alone`,
    ),
    row(
      "    the same records' JSON written apart from the core, as before ADR 0047 (kept first; JsonLines)",
      sec(apart.ms),
      `JSON.stringify of each (strings, no UTF-8 bytes), for comparison: ${sec(apart.stringifyMs)}`,
    ),
    row(
      `    publishing those bodies to a fresh TM_PANES / TM_LATE (PaneSink, acked, an ack round every ${PACE})`,
      sec(pub.ms),
      `CPU ${sec(pub.cpuMs)} here, ${sec(pub.serverCpuMs)} in nats-server`,
    ),
    row(
      "    best engine / core alone on one thread: core with bodies + decode + publish CPU",
      best(oneThread),
      `${sec(oneThread)} of work`,
    ),
    row(
      `    best engine / core alone on all ${cores} cores, nats-server's CPU included, perfectly spread`,
      best(spread),
      `${sec(oneThread + pub.serverCpuMs)} of CPU / ${cores}; engine / bare read at best ${bare(spread)}`,
    ),
    row(
      "    the same if writing the bodies cost nothing: core alone + decode + publishing the same bytes",
      best(bytesOnly),
      `${sec(bytesOnly * cores)} of CPU / ${cores}; engine / bare read at best ${bare(bytesOnly)}`,
    ),
    ...budgetRows(input, encodings.binaryMs, pub, cores),
    ...encodings.rows,
  ];
}

const sec = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** The best engine / core-alone ratio for an engine run taking at least `ms` (never less than the core alone). */
const bestOfCore = (input: FloorInput, ms: number): string =>
  `${(input.coreAloneMs / Math.max(ms, input.coreAloneMs)).toFixed(2)}×`;

/** The same against the bare read. */
const bestOfBare = (input: FloorInput, ms: number): string =>
  `${(input.bareRead.ms / Math.max(ms, input.coreAloneMs)).toFixed(2)}×`;

/**
 * The targets' budget against the least CPU any engine design spends on these events
 * (docs/decisions/0028-runtime-targets-on-two-cores.md): it reads and decodes them (the bare read,
 * its CPU and nats-server's delivering them), runs the core, writes the panes' bodies (binary since
 * docs/decisions/0047-binary-panes.md; before it, the JSON, the cheaper of
 * the two measurements apart from the core) and publishes it (this process and nats-server). No
 * design can take less wall time than that CPU over the machine's cores. The core alone and the
 * JSON apart run on one thread and count by their wall time: on a loaded machine that overstates
 * their CPU, so the verdict is the quiet machine's.
 */
function budgetRows(
  input: FloorInput,
  /** The bodies written apart from the core, ms. */
  jsonMs: number,
  pub: { cpuMs: number; serverCpuMs: number },
  cores: number,
): string[] {
  const read = input.bareRead;
  const least = read.cpuMs + read.serverCpuMs + input.coreAloneMs + jsonMs + pub.cpuMs + pub.serverCpuMs;
  const wall = least / cores;
  const coreBudget = input.coreAloneMs / 0.6;
  const bareBudget = read.ms / 0.5;
  const verdict = (budget: number): string => (wall <= budget ? "within it" : `over it by ${sec(wall - budget)}`);
  return [
    row(
      "    least CPU any design spends: bare read (here + nats-server) + core alone + binary bodies apart + publish (here + nats-server)",
      sec(least),
      `${sec(read.cpuMs + read.serverCpuMs)} + ${sec(input.coreAloneMs)} + ${sec(jsonMs)} + ${sec(pub.cpuMs + pub.serverCpuMs)}; at least ${sec(wall)} of wall time on ${cores} cores`,
    ),
    row(
      "    target engine / core alone ≥ 0.6×: the engine within core alone / 0.6",
      sec(coreBudget),
      `the least work spread perfectly is ${verdict(coreBudget)}; engine / core alone at best ${bestOfCore(input, wall)}`,
    ),
    row(
      "    target engine / bare read ≥ 0.5×: the engine within bare read / 0.5",
      sec(bareBudget),
      `the least work spread perfectly is ${verdict(bareBudget)}; engine / bare read at best ${bestOfBare(input, wall)}`,
    ),
  ];
}
