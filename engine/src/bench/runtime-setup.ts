/**
 * What the runtime benchmarks share (runtime.ts, runtime-profile.ts): a nats-server of their own
 * (loopback, temp store), the recording (the core benchmark's density) and its publication to
 * TM_EVENTS the way `tidemark backfill` writes it (BackfillPlan: batches of 500, heartbeats, the
 * end-of-recording heartbeat).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { connect, headers } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { simulate, type CoreConfig } from "../core/index.js";
import { HEARTBEAT_HEADER, STREAM_LATE, STREAM_PANES, eventsSubject, type TelemetryEvent } from "../protocol.js";
import { BackfillPlan, type BackfillMessage } from "../runtime/backfill/backfill-plan.js";
import { ensureStream, eventsStreamSpec } from "../nats/index.js";

/**
 * Events per second of log time: the core benchmark's busy system (run.ts, 50k/s) with its key
 * space (20 services × 20 routes, 20k users). Panes are per key and trigger tick, not per event,
 * so this sets panes per event: a sparser stream (100k events over 300 s here before: 333/s) makes
 * ~3.7 panes per event and measures the pane sink, not the engine.
 */
export const EVENTS_PER_LOG_SECOND = 50_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

export async function natsServer(dir: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(dir, "js")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    child.once("error", reject);
    child.stderr?.on("data", (b: Buffer) => {
      log += b.toString();
      if (log.includes("Server is ready")) resolve();
    });
  });
  const exited = new Promise((r) => child.once("exit", r));
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid ?? NaN,
    stop: async () => void (child.kill("SIGTERM"), await exited),
  };
}

export function recording(n: number): TelemetryEvent[] {
  const spanMs = Math.max(1, Math.round((n / EVENTS_PER_LOG_SECOND) * 1000));
  const events = simulate({ seed: 3, events: n, spanMs, services: 20, routes: 20, users: 20_000 });
  return events.sort((a, b) => a.ingest_ts - b.ingest_ts);
}

export async function publish(
  url: string,
  events: readonly TelemetryEvent[],
  core: CoreConfig,
): Promise<BackfillMessage[]> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  await ensureStream(await jetstreamManager(nc), eventsStreamSpec());
  const js = jetstream(nc);
  const plan = new BackfillPlan({ partitions: 8, runId: "bench" });
  const messages = [...events.flatMap((e) => plan.push(e)), ...plan.end(core)];
  const inFlight = new Set<Promise<unknown>>();
  for (const m of messages) {
    const h = headers();
    if (m.heartbeatTs !== undefined) h.set(HEARTBEAT_HEADER, String(m.heartbeatTs));
    const p: Promise<unknown> = js
      .publish(eventsSubject(m.partition), m.body, { msgID: m.msgId, headers: h })
      .then(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= 256) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  await nc.drain();
  return messages;
}

/** One row of the runtime benchmark's table: what, the figure, a note. */
export function row(a: string, b: string, c: string): string {
  const label = a.padEnd(86);
  const value = b.padStart(12);
  // A label or value longer than its column still leaves a space between them.
  const gap = label.endsWith(" ") || value.startsWith(" ") ? "" : " ";
  return `  ${label}${gap}${value}  ${c}`;
}

/** Deletes TM_PANES and TM_LATE, so that no publish of a run is a duplicate of an earlier run's. */
export async function deletePaneStreams(jsm: JetStreamManager): Promise<void> {
  for (const stream of [STREAM_PANES, STREAM_LATE]) await jsm.streams.delete(stream).catch(() => false);
}

/** User + system CPU of a process, ms, from /proc/<pid>/stat (NaN where there is none). */
export function processCpuMs(pid: number): number {
  try {
    const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
