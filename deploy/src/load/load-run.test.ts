/** The live run against a loopback stand-in for ingest (the real one: test/src/load/load-command.test.ts). */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runLoad, type LoadRunOptions } from "./load-run.js";

interface FakeIngest {
  url: string;
  /** Events stored, by Idempotency-Key (a resent key is stored once, as JetStream does). */
  stored: Map<string, number>;
  close(): Promise<void>;
}

async function fakeIngest(
  answer: (req: IncomingMessage, lines: number, res: ServerResponse) => void,
): Promise<FakeIngest> {
  const stored = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      const lines = body.split("\n").filter((l) => l !== "").length;
      stored.set(String(req.headers["idempotency-key"]), lines);
      answer(req, lines, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stored,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const accept = (_req: IncomingMessage, lines: number, res: ServerResponse): void => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ accepted: lines, rejected: 0, clamped: 0, errors: [] }));
};

function options(ingest: string, more: Partial<LoadRunOptions> = {}): LoadRunOptions {
  return {
    ingest,
    token: "t",
    rate: 2000,
    durationMs: 1500,
    services: 4,
    routes: 2,
    users: 500,
    senders: 2,
    batch: 200,
    seed: 3,
    corr: 0,
    windowMs: 10_000,
    record: undefined,
    lag: undefined,
    log: () => undefined,
    ...more,
  };
}

let server: FakeIngest | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("runLoad", () => {
  it("sends every generated event, the held-back ones at the end, and counts what was stored", async () => {
    server = await fakeIngest(accept);
    const r = await runLoad(options(server.url), new AbortController().signal);
    const stored = [...server.stored.values()].reduce((a, b) => a + b, 0);
    expect(r.failure).toBeUndefined();
    expect(r.counters.generated).toBeGreaterThan(2500);
    expect(r.counters.late).toBeGreaterThan(0);
    expect(r.counters).toMatchObject({ accepted: r.counters.generated, shed: 0, unsent: 0, retries: 0 });
    expect(stored).toBe(r.counters.accepted);
    expect(r.ledger.count).toBe(r.counters.accepted);
    // The late tail (up to 30 s) went out at the end of the 1.5 s run, not 30 s later.
    expect(r.endedAt - r.startedAt).toBeLessThan(5000);
  });

  it("sheds past the cap when ingest is slow, and every event is accounted for once", async () => {
    server = await fakeIngest((req, lines, res) => void setTimeout(() => accept(req, lines, res), 400));
    const r = await runLoad(
      options(server.url, { senders: 1, maxQueuedEvents: 400, batch: 100 }),
      new AbortController().signal,
    );
    const c = r.counters;
    expect(c.shed).toBeGreaterThan(0);
    expect(c.accepted + c.shed + c.unsent + c.refused + c.rejected).toBe(c.generated);
    expect([...server.stored.values()].reduce((a, b) => a + b, 0)).toBe(c.accepted);
  });

  it("stops with TM_LOAD_REFUSED on a 401, without resending", async () => {
    server = await fakeIngest((_req, _lines, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":{"code":"TM_INGEST_UNAUTHORIZED","message":"missing or wrong bearer token"}}');
    });
    const r = await runLoad(options(server.url, { durationMs: 10_000 }), new AbortController().signal);
    expect((r.failure as { code?: string } | undefined)?.code).toBe("TM_LOAD_REFUSED");
    expect(r.counters.accepted).toBe(0);
    expect(r.counters.http4xx).toBeLessThanOrEqual(2);
    expect(r.endedAt - r.startedAt).toBeLessThan(5000);
  });
});
