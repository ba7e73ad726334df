/**
 * `npm run bench -w ingest`: events/s from HTTP (NDJSON, 1000 events per request, concurrent
 * clients on loopback) to JetStream ack, beside bare JSON.parse of the same bytes on one core,
 * measured in the same run; then p99 request latency at half the measured load.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { startBenchNats } from "./bench-nats.js";

const EVENTS_PER_REQUEST = 1000;
const CONNECTIONS = 8;
const DURATION_S = 10;

function ndjsonBody(): string {
  const now = Date.now();
  const lines: string[] = [];
  for (let i = 0; i < EVENTS_PER_REQUEST; i++) {
    const e = {
      ts: now - ((i * 37) % 5000),
      service: `svc-${i % 20}`,
      route: `/api/v1/items/${i % 50}`,
      status: i % 97 === 0 ? 503 : 200,
      latency_ms: (i * 7.3) % 900,
      user: `user-${(i * 13) % 4000}`,
    };
    lines.push(JSON.stringify(e));
  }
  return lines.join("\n") + "\n";
}

/** Events/s of JSON.parse on each line of `body`, one core, for ~`ms`. */
function jsonParseRate(body: string, ms: number): number {
  const lines = body.split("\n").filter((l) => l !== "");
  let events = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms) {
    for (const line of lines) JSON.parse(line);
    events += lines.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return (events / elapsed) * 1000;
}

async function main(): Promise<void> {
  const body = ndjsonBody();
  const nats = await startBenchNats();
  const child = fork(fileURLToPath(new URL("./serve.js", import.meta.url)), [nats.url], {
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
    };
    const parseRate = jsonParseRate(body, 2000);
    await autocannon({ ...target, connections: CONNECTIONS, duration: 2 }); // warm-up
    const full = await autocannon({ ...target, connections: CONNECTIONS, duration: DURATION_S });
    const ingestRate = full.requests.average * EVENTS_PER_REQUEST;
    const halfRate = Math.max(1, Math.round(full.requests.average / 2));
    const half = await autocannon({ ...target, connections: CONNECTIONS, duration: DURATION_S, overallRate: halfRate });
    const row = (k: string, v: string): string => `| ${k} | ${v} |`;
    console.log(
      [
        `ingest benchmark (${new Date().toISOString()}, node ${process.version}, ${CONNECTIONS} connections, ${EVENTS_PER_REQUEST} events/request, ${Buffer.byteLength(body)} bytes/request)`,
        "",
        "| measure | value |",
        "|---|---|",
        row("bare JSON.parse per NDJSON line, one core", `${Math.round(parseRate).toLocaleString("en")} events/s`),
        row(
          "HTTP → JetStream ack, full load",
          `${Math.round(ingestRate).toLocaleString("en")} events/s (${full.requests.average.toFixed(1)} req/s)`,
        ),
        row("ratio ingest / JSON.parse", (ingestRate / parseRate).toFixed(3)),
        row("latency at full load p50 / p99", `${full.latency.p50} ms / ${full.latency.p99} ms`),
        row("errors at full load (non-2xx / socket)", `${full.non2xx} / ${full.errors}`),
        row(
          `half load (${halfRate} req/s offered)`,
          `${Math.round(half.requests.average * EVENTS_PER_REQUEST).toLocaleString("en")} events/s`,
        ),
        row("latency at half load p50 / p99", `${half.latency.p50} ms / ${half.latency.p99} ms`),
        row("errors at half load (non-2xx / socket)", `${half.non2xx} / ${half.errors}`),
      ].join("\n"),
    );
  } finally {
    child.send("stop");
    await new Promise((r) => child.once("exit", r));
    await nats.stop();
  }
}

await main();
