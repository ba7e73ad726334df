/**
 * `npm run bench -w ingest` (second part): the event loop's delay while 16 MiB bodies are posted,
 * with parsing off the event loop (parse workers, docs/ingest.md "Parsing off the event loop")
 * and with every body parsed inline (parseWorkers 0), in one run against one nats-server.
 * perf_hooks.monitorEventLoopDelay at 1 ms resolution runs in the ingest's process while a
 * client in the same process posts BODIES bodies, CONCURRENCY at a time; the client's bodies are
 * encoded before measuring. Printed: delay p50/p99/max per mode, and p99 off-loop / inline.
 * Then throughput at the main benchmark's 125 KB bodies (run.ts): ingest in a child process with
 * every body inline (0 workers), the defaults (2 workers, bodies of 256 KiB and more), and 2 workers
 * taking every body of 64 KiB and more; autocannon for THROUGHPUT_S each, the three in turn
 * ROUNDS times (the best of each counts: other load on a shared machine only lowers a run); ratios to inline.
 */
import { fork } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { defineIngestConfig } from "../config.js";
import { startIngest } from "../server.js";
import { startBenchNats } from "./bench-nats.js";

const BODIES = 8;
const CONCURRENCY = 2;
const MAX_BODY = 16 * 1024 * 1024;
const THROUGHPUT_S = 8;
const ROUNDS = 2;

/** An NDJSON body just under 16 MiB (and under 100,000 events). */
function body(now: number): Uint8Array {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; i < 100_000; i++) {
    const line =
      JSON.stringify({
        ts: now - (i % 60_000),
        service: `svc-${i % 20}`,
        route: `/api/v1/items/${i % 50}/details/with/a/longer/path/segment`,
        status: i % 97 === 0 ? 503 : 200,
        latency_ms: (i * 7.3) % 900,
        user: `user-${(i * 13) % 4000}-with-some-padding-to-make-it-longer`,
      }) + "\n";
    if (size + line.length > MAX_BODY - 1) break;
    lines.push(line);
    size += line.length;
  }
  return new TextEncoder().encode(lines.join(""));
}

interface Result {
  mode: string;
  p50: number;
  p99: number;
  max: number;
  seconds: number;
  events: number;
}

async function measure(mode: "inline" | "off-loop", natsUrl: string, payload: Uint8Array): Promise<Result> {
  const server = await startIngest(
    defineIngestConfig({ port: 0, natsUrl, logLevel: "silent", parseWorkers: mode === "inline" ? 0 : 2 }),
  );
  const post = async (): Promise<number> => {
    const res = await fetch(`${server.url}/v1/events`, {
      method: "POST",
      body: payload,
      headers: { "content-type": "application/x-ndjson" },
    });
    const out = (await res.json()) as { accepted?: number };
    if (res.status !== 200) throw new Error(`${mode}: HTTP ${res.status} ${JSON.stringify(out)}`);
    return out.accepted ?? 0;
  };
  await post(); // warm-up
  const h = monitorEventLoopDelay({ resolution: 1 });
  const started = performance.now();
  h.enable();
  let events = 0;
  for (let sent = 0; sent < BODIES; sent += CONCURRENCY)
    for (const n of await Promise.all(Array.from({ length: CONCURRENCY }, post))) events += n;
  h.disable();
  const seconds = (performance.now() - started) / 1000;
  await server.close();
  return {
    mode,
    p50: h.percentile(50) / 1e6,
    p99: h.percentile(99) / 1e6,
    max: h.max / 1e6,
    seconds,
    events,
  };
}

/** NDJSON of 1000 events, about 125 KB, as run.ts posts. */
function smallBody(now: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 1000; i++)
    lines.push(
      JSON.stringify({
        ts: now - ((i * 37) % 5000),
        service: `svc-${i % 20}`,
        route: `/api/v1/items/${i % 50}`,
        status: i % 97 === 0 ? 503 : 200,
        latency_ms: (i * 7.3) % 900,
        user: `user-${(i * 13) % 4000}`,
      }),
    );
  return lines.join("\n") + "\n";
}

/** Events/s to JetStream ack with `workers` parse workers, ingest in a child process. */
async function throughput(natsUrl: string, workers: number, offloadBytes: number, body: string): Promise<number> {
  const args = [natsUrl, String(workers), String(offloadBytes)];
  const child = fork(fileURLToPath(new URL("./serve.js", import.meta.url)), args, {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  try {
    const { url } = await new Promise<{ url: string }>((resolve) =>
      child.once("message", (m) => resolve(m as { url: string })),
    );
    const target = {
      url: `${url}/v1/events`,
      method: "POST",
      body,
      headers: { authorization: "Bearer bench-token-123", "content-type": "application/x-ndjson" },
      connections: 8,
    };
    await autocannon({ ...target, duration: 2 });
    const r = await autocannon({ ...target, duration: THROUGHPUT_S });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${workers} workers: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r.requests.average * 1000;
  } finally {
    child.send("stop");
    await new Promise((r) => child.once("exit", r));
  }
}

async function main(): Promise<void> {
  const nats = await startBenchNats();
  try {
    const payload = body(Date.now());
    console.log(
      `parse offload: ${BODIES} NDJSON bodies of ${(payload.length / 1048576).toFixed(1)} MiB, ${CONCURRENCY} at a time`,
    );
    const inline = await measure("inline", nats.url, payload);
    const off = await measure("off-loop", nats.url, payload);
    for (const r of [inline, off])
      console.log(
        `  ${r.mode.padEnd(8)} event-loop delay p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  max ${r.max.toFixed(1)} ms` +
          `  (${r.events} events in ${r.seconds.toFixed(2)} s, ${Math.round(r.events / r.seconds)} events/s)`,
      );
    console.log(`  ratio p99 off-loop / inline: ${(off.p99 / inline.p99).toFixed(3)}`);
    console.log(`  ratio max off-loop / inline: ${(off.max / inline.max).toFixed(3)}`);
    const small = smallBody(Date.now());
    let [inlineRate, defaultRate, eagerRate] = [0, 0, 0];
    for (let round = 0; round < ROUNDS; round++) {
      inlineRate = Math.max(inlineRate, await throughput(nats.url, 0, 256 * 1024, small));
      defaultRate = Math.max(defaultRate, await throughput(nats.url, 2, 256 * 1024, small));
      eagerRate = Math.max(eagerRate, await throughput(nats.url, 2, 64 * 1024, small));
    }
    console.log(
      `throughput, ${Buffer.byteLength(small)}-byte NDJSON bodies, 8 connections, best of ${ROUNDS} runs of ${THROUGHPUT_S} s (events/s to JetStream ack):`,
    );
    console.log(`  inline (0 workers)                      ${Math.round(inlineRate)}`);
    console.log(
      `  defaults (2 workers, >= 256 KiB: inline)  ${Math.round(defaultRate)}  ratio ${(defaultRate / inlineRate).toFixed(3)}`,
    );
    console.log(
      `  2 workers taking >= 64 KiB (offloaded)  ${Math.round(eagerRate)}  ratio ${(eagerRate / inlineRate).toFixed(3)}`,
    );
  } finally {
    await nats.stop();
  }
}

await main();
