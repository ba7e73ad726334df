/**
 * Helpers for the engine's real-NATS tests and the E7 experiment: a seeded recording, the engine
 * and backfill as real child processes, reading TM_PANES / TM_LATE back, and the recording's
 * truth computed independently of the engine.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  STREAM_LATE,
  STREAM_PANES,
  STREAM_PARTIALS,
  decodePartialMessage,
  type EngineStatusMessage,
  type PartialBatch,
  type Pane,
  type TelemetryEvent,
} from "@tidemark/engine/protocol";
import { paneBodyLines } from "@tidemark/engine/nats";
import { spawnTidemark, type CliProcess } from "../harness/processes.js";

export const SERVICES = ["api", "web", "auth", "billing", "search", "cart", "media", "mail"];

/** A seeded recording in arrival order: the seed's delay mixture (92% ~2 s, 8% up to 60 s). */
export function makeRecording(opts: {
  events: number;
  seed: number;
  startMs?: number;
  services?: string[];
}): TelemetryEvent[] {
  let s = opts.seed >>> 0 || 1;
  const rnd = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const services = opts.services ?? SERVICES;
  let t = opts.startMs ?? 1_700_000_000_000;
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < opts.events; i++) {
    t += Math.floor(rnd() * 40);
    const late = rnd() < 0.08;
    const delay = late ? Math.floor(rnd() * 60_000) : Math.floor(-Math.log(1 - rnd()) * 2_000);
    const error = rnd() < (late ? 0.2 : 0.04);
    out.push({
      ts: t - delay,
      ingest_ts: t,
      service: services[Math.floor(rnd() * services.length)] as string,
      route: `/r${Math.floor(rnd() * 3)}`,
      status: error ? 503 : 200,
      latency_ms: Math.floor(5 + rnd() * 300),
      user: `u${Math.floor(rnd() * 100)}`,
    });
  }
  return out;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tidemark-${prefix}-`));
}

export function writeRecording(dir: string, events: readonly TelemetryEvent[], name = "rec.ndjson"): string {
  const file = join(dir, name);
  writeFileSync(file, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  return file;
}

export interface BackfillSummary {
  events: number;
  messages: number;
  heartbeats: number;
  duplicates: number;
  endOfRecordingTs: number;
  runId: string;
}

/** Runs `tidemark backfill` to completion and returns its summary line. */
export async function runBackfill(natsUrl: string, file: string, extra: string[] = []): Promise<BackfillSummary> {
  const p = spawnTidemark(["backfill", "--input", file, "--nats", natsUrl, ...extra]);
  const code = await p.exited;
  const line = p
    .output()
    .split("\n")
    .find((l) => l.startsWith("tidemark backfill done "));
  if (code !== 0 || !line) throw new Error(`backfill exited ${code}:\n${p.output()}`);
  return JSON.parse(line.slice("tidemark backfill done ".length)) as BackfillSummary;
}

export function startEngine(natsUrl: string, dataDir: string, extra: string[] = []): CliProcess {
  return spawnTidemark(["engine", "--nats", natsUrl, "--data", dataDir, "--metrics-port", "0", ...extra]);
}

/** SIGTERM and wait for the exit (the engine writes its final checkpoint). */
export async function stopGracefully(p: CliProcess): Promise<void> {
  if (p.child.exitCode !== null) return;
  p.child.kill("SIGTERM");
  await p.exited;
}

/** `token`: the nats-server `tidemark up` starts takes its generated token (ready line `natsToken`). */
export function connectNats(url: string, token?: string): Promise<NatsConnection> {
  return connect({ servers: url, noAsyncTraces: true, ...(token === undefined ? {} : { token }) });
}

/** One stored message: its subject, Nats-Msg-Id and body. */
export interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: string;
  /** The body's bytes (a TM_PARTIALS body is binary). */
  data: Uint8Array;
}

/** Every message of a stream, in stream order. */
export async function readMessages(nc: NatsConnection, stream: string): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(nc);
  const last = (await jsm.streams.info(stream)).state.last_seq;
  const out: StoredMessage[] = [];
  if (last === 0) return out;
  const consumer = await jetstream(nc).consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: 512 });
  for await (const m of messages) {
    out.push({
      seq: m.seq,
      subject: m.subject,
      msgId: m.headers?.get("Nats-Msg-Id") || undefined,
      body: m.string(),
      data: m.data,
    });
    if (m.seq >= last) break;
  }
  return out;
}

/** The JSON of each pane or late record of a TM_PANES / TM_LATE message (gzip-compressed or not). */
export function bodyLines(m: StoredMessage): string[] {
  return paneBodyLines(m.data);
}

/**
 * Every message body of a stream, in stream order; for TM_PANES and TM_LATE every pane or late
 * record, each message being a batch of them, one JSON per line (docs/decisions/0012-batched-transport.md).
 */
export async function readStream(nc: NatsConnection, stream: string): Promise<string[]> {
  const messages = await readMessages(nc, stream);
  return stream === STREAM_PANES || stream === STREAM_LATE ? messages.flatMap(bodyLines) : messages.map((m) => m.body);
}

/** Every partial batch of TM_PARTIALS (a run's each, docs/decisions/0054-partial-runs.md), decoded, in stream order. */
export async function readPartials(nc: NatsConnection): Promise<PartialBatch[]> {
  return (await readMessages(nc, STREAM_PARTIALS)).flatMap((m) => decodePartialMessage(m.data));
}

/** Panes deduplicated on (id, seq), as the idempotent sinks see them; throws if a replay differs. */
export function dedupePanes(bodies: readonly string[]): Map<string, Pane> {
  const byIdSeq = new Map<string, Pane>();
  for (const b of bodies) {
    const p = JSON.parse(b) as Pane;
    const k = `${p.id}#${p.seq}`;
    const seen = byIdSeq.get(k);
    if (seen && normalized(seen) !== normalized(p)) throw new Error(`pane ${k} emitted twice with different content`);
    byIdSeq.set(k, p);
  }
  return byIdSeq;
}

/** A pane's JSON without the wall-clock field (pipelineLagMs is wall − log time at emit). */
export function normalized(p: Pane): string {
  return JSON.stringify({ ...p, pipelineLagMs: 0 });
}

/** The last pane (highest seq, retractions aside) of each id. */
export function lastPanes(panes: Iterable<Pane>): Map<string, Pane> {
  const out = new Map<string, Pane>();
  for (const p of panes) {
    if (p.kind === "retract") continue;
    const prev = out.get(p.id);
    if (!prev || p.seq > prev.seq) out.set(p.id, p);
  }
  return out;
}

/** Resolves with the first tm.status message of `worker` that satisfies `ok`. */
export async function waitForStatus(
  nc: NatsConnection,
  ok: (s: EngineStatusMessage) => boolean,
  timeoutMs: number,
  what: string,
): Promise<EngineStatusMessage> {
  const sub = nc.subscribe("tm.status");
  const timer = setTimeout(() => sub.unsubscribe(), timeoutMs);
  let last: EngineStatusMessage | undefined;
  try {
    for await (const m of sub) {
      last = JSON.parse(m.string()) as EngineStatusMessage;
      if (ok(last)) return last;
    }
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last status: ${JSON.stringify(last)}`);
}

/**
 * The recording's truth for an arrival-lag policy (docs/semantics.md, "Late data"), from the
 * recording alone: an event counts for window [s, e) unless e + grace <= W at its arrival, W =
 * ingest_ts − lag. Keyed like the engine's service panes: `<policy>|<service>|<size>|<start>` →
 * count, errors.
 */
export function truthByPane(
  events: readonly TelemetryEvent[],
  policy: { name: string; lagMs: number; graceMs: number },
  sizeMs: number,
): Map<string, { count: number; errors: number }> {
  const out = new Map<string, { count: number; errors: number }>();
  for (const e of events) {
    const start = Math.floor(e.ts / sizeMs) * sizeMs;
    if (start + sizeMs + policy.graceMs <= e.ingest_ts - policy.lagMs) continue;
    const id = `${policy.name}|${encodeURIComponent(e.service)}|${sizeMs}|${start}`;
    const t = out.get(id) ?? { count: 0, errors: 0 };
    t.count++;
    if (e.status >= 500) t.errors++;
    out.set(id, t);
  }
  return out;
}

/** The metrics text of an engine whose ready line is `ready`. */
export async function scrape(ready: Record<string, unknown>): Promise<string> {
  const url = (ready.engine as { metrics: string }).metrics;
  return (await fetch(url)).text();
}

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== "{" && rest[0] !== " ") continue;
    if (Object.entries(labels).every(([k, v]) => rest.includes(`${k}="${v}"`))) return Number(line.split(" ").at(-1));
  }
  return undefined;
}
