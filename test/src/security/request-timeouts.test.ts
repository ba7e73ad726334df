/**
 * HTTP request timeouts (docs/security.md, "Ingest limits"; docs/operations.md, "HTTP timeouts"):
 * a client that trickles its headers one byte at a time and stalls is disconnected by ingest and
 * by the dashboard within the configured bound; a request whose body stalls is cut and its
 * in-flight bytes are given back (a request that needed them is accepted next); a WebSocket,
 * once upgraded, outlives every bound. Real nats-server, real sockets; each wait is on a socket's
 * close event or a frame.
 */
import { connect as tcpConnect } from "node:net";
import { performance } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig, startDashboard, type DashboardConfigInput, type DashboardServer } from "@tidemark/dashboard";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import { connectWs } from "../dashboard/fixtures.js";
import { inFlightBytes, startIngestFixture, TOKEN, type IngestFixture } from "../ingest/ingest-fixture.js";

/** Node checks its bounds every half the smallest bound (at most 1 s): a cut comes this late at most, plus scheduling. */
const SLACK_MS = 1000;

interface Stalled {
  /** Resolves when the server closed the socket: how long after connecting, and what it answered. */
  readonly closed: Promise<{ ms: number; answer: string }>;
}

/** Connects to `url`, writes `bytes` one byte per write (each after the previous was flushed), then `rest` whole, then stalls. */
function stallAfter(url: string, bytes: string, rest = ""): Stalled {
  const { hostname, port } = new URL(url);
  const t0 = performance.now();
  const socket = tcpConnect({ host: hostname, port: Number(port), noDelay: true });
  let answer = "";
  socket.on("data", (d: Buffer) => (answer += d.toString("latin1")));
  socket.on("error", () => undefined);
  const closed = new Promise<{ ms: number; answer: string }>((resolve) =>
    socket.once("close", () => resolve({ ms: performance.now() - t0, answer })),
  );
  socket.once("connect", () => {
    void (async () => {
      for (const ch of bytes) await new Promise<void>((resolve) => socket.write(ch, () => resolve()));
      if (rest !== "") socket.write(rest);
    })();
  });
  return { closed };
}

const HEADERS_PART = "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n";

function postHead(path: string, contentLength: number, extra = "", type = "application/x-ndjson"): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${contentLength}\r\n${extra}\r\n`;
}

const FORM = "application/x-www-form-urlencoded";

/** NDJSON events of about `bytes` bytes in all. */
function ndjson(bytes: number): string {
  const line = JSON.stringify({ service: "timeouts", route: "/r", status: 200, latency_ms: 1 }) + "\n";
  return line.repeat(Math.ceil(bytes / line.length));
}

describe("ingest request timeouts", () => {
  let fx: IngestFixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  it("disconnects a client that trickles its headers and stalls, within headersTimeout", async () => {
    fx = await startIngestFixture({ headersTimeoutMs: "1s", requestTimeoutMs: "5s" });
    const { ms, answer } = await stallAfter(fx.ingest.url, HEADERS_PART).closed;
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(ms).toBeLessThan(1000 + SLACK_MS);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    // The server still serves.
    expect((await fx.post("/v1/events", ndjson(100), "application/x-ndjson")).status).toBe(200);
  });

  it("cuts a body that stalls (bodyIdleTimeout) and gives its bytes back: a request that needed them is accepted next", async () => {
    fx = await startIngestFixture({ maxInFlightBytes: 100_000, bodyIdleTimeoutMs: "1s" });
    const f = fx;
    const next = ndjson(50_000);
    const held = ndjson(60_000);
    const stalled = stallAfter(
      f.ingest.url,
      "",
      postHead("/v1/events", held.length + 1000, `Authorization: Bearer ${TOKEN}\r\n`) + held,
    );
    await waitFor(async () => (await inFlightBytes(f.ingest.url)) === held.length, 10_000, "the stalled body held");
    // Held, the budget has no room for the next request.
    expect((await f.post("/v1/events", next, "application/x-ndjson")).status).toBe(429);
    const { ms, answer } = await stalled.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain("TM_INGEST_BODY_TIMEOUT");
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(await inFlightBytes(f.ingest.url)).toBe(0);
    const res = await f.post("/v1/events", next, "application/x-ndjson");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { accepted: number }).accepted).toBe(next.split("\n").length - 1);
  });

  it("cuts a whole request past requestTimeout even with no body-idle timeout, and gives its bytes back", async () => {
    fx = await startIngestFixture({
      maxInFlightBytes: 100_000,
      bodyIdleTimeoutMs: 0,
      requestTimeoutMs: "1500ms",
      headersTimeoutMs: "1s",
    });
    const f = fx;
    const held = ndjson(60_000);
    const stalled = stallAfter(
      f.ingest.url,
      "",
      postHead("/v1/events", held.length + 1000, `Authorization: Bearer ${TOKEN}\r\n`) + held,
    );
    await waitFor(async () => (await inFlightBytes(f.ingest.url)) === held.length, 10_000, "the stalled body held");
    const { ms } = await stalled.closed;
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(1500 + SLACK_MS);
    await waitFor(async () => (await inFlightBytes(f.ingest.url)) === 0, 5_000, "the cut body's bytes given back");
    expect((await f.post("/v1/events", ndjson(50_000), "application/x-ndjson")).status).toBe(200);
  });
});

describe("dashboard request timeouts", () => {
  let nats: TestNats | undefined;
  let dash: DashboardServer | undefined;
  afterEach(async () => {
    await dash?.close();
    await nats?.stop();
    dash = undefined;
    nats = undefined;
  });

  async function start(config: DashboardConfigInput): Promise<DashboardServer> {
    nats = await startTestNats();
    dash = await startDashboard(
      resolveConfig({ logLevel: "silent", retryMs: "100ms", port: 0, nats: nats.url, ...config }),
    );
    return dash;
  }

  it("disconnects a client that trickles its headers, and a request whose body stalls; an upgraded WebSocket stays", async () => {
    const d = await start({
      headersTimeoutMs: "500ms",
      requestTimeoutMs: "1s",
      connectionTimeoutMs: "2s",
      queryTimeoutMs: "500ms",
    });
    const ws = await connectWs(d.url);
    await ws.next("hello");
    const headers = stallAfter(d.url, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const body = stallAfter(d.url, "", postHead("/api/v1/query", 100, "", FORM) + "query=");
    const h = await headers.closed;
    expect(h.ms).toBeGreaterThanOrEqual(500);
    expect(h.ms).toBeLessThan(500 + SLACK_MS);
    expect(h.answer).toMatch(/^HTTP\/1\.1 408 /);
    const b = await body.closed;
    expect(b.ms).toBeGreaterThanOrEqual(1000);
    expect(b.ms).toBeLessThan(1000 + SLACK_MS);
    expect(b.answer).toMatch(/^HTTP\/1\.1 408 /);
    // The WebSocket, older than both bounds, still answers both ways.
    ws.send({ type: "subscribe", panels: [{ panel: "p", metric: "requests", policy: "dashboard", windowMs: 10_000 }] });
    await ws.next("snapshot");
    expect(ws.ws.readyState).toBe(ws.ws.OPEN);
    await ws.close();
  });

  it("closes a socket idle past connectionTimeout (no request timeout set); an idle WebSocket stays", async () => {
    const d = await start({
      headersTimeoutMs: "500ms",
      requestTimeoutMs: 0,
      connectionTimeoutMs: "1500ms",
      queryTimeoutMs: "1s",
    });
    const ws = await connectWs(d.url);
    await ws.next("hello");
    const idle = stallAfter(d.url, "", postHead("/api/v1/query", 100, "", FORM) + "query=");
    const { ms } = await idle.closed;
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(ms).toBeLessThan(1500 + SLACK_MS);
    ws.send({ type: "subscribe", panels: [{ panel: "p", metric: "requests", policy: "dashboard", windowMs: 10_000 }] });
    await ws.next("snapshot");
    expect(ws.ws.readyState).toBe(ws.ws.OPEN);
    await ws.close();
  });
});
