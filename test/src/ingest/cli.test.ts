/** `tidemark ingest` as users run it: the built CLI, a real nats-server, real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { freePort } from "@tidemark/deploy";
import { isAlive, spawnTidemark, startTestNats, waitFor, type TestNats } from "../index.js";
import { inFlightBytes, readEventsStream, streamingPost } from "./ingest-fixture.js";

const TOKEN = "cli-secret-token-42";

describe("tidemark ingest", () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startTestNats();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it("prints its ready line, stores events, keeps tokens out of its logs, and exits 0 on SIGTERM after finishing in-flight requests", async () => {
    const port = await freePort();
    const proc = spawnTidemark(
      ["ingest", "--port", String(port), "--grpc-port", "0", "--nats", nats.url, "--partition-count", "3"],
      {
        env: { TIDEMARK_INGEST_TOKENS: TOKEN },
      },
    );
    const ready = await proc.ready;
    // --grpc-port 0: OTLP/gRPC off (so this test never holds 4317), named null in the ready line.
    expect(ready).toEqual({ ingest: `http://127.0.0.1:${port}`, grpc: null });
    const post = (token: string, body: string) =>
      fetch(`${ready.ingest as string}/v1/events`, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
      });
    expect((await post("wrong-token-wrong", '{"service":"a"}')).status).toBe(401);
    const body = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ service: `s${i % 5}`, latency_ms: i })).join(
      "\n",
    );
    expect((await post(TOKEN, body)).status).toBe(200);
    // A request whose body is still arriving when SIGTERM comes: it is finished and answered 200,
    // then the process exits 0 promptly (keep-alive sockets do not hold it open).
    const bytes = new TextEncoder().encode(body);
    const { push, response: inFlight } = streamingPost(`${ready.ingest as string}/v1/events`, {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/x-ndjson",
    });
    push(bytes.subarray(0, bytes.length / 2));
    await waitFor(
      async () => (await inFlightBytes(ready.ingest as string)) > 0,
      10_000,
      "the request body to be arriving",
    );
    proc.child.kill("SIGTERM");
    // The rest of the body goes only once the ingest is closing: a new request is refused (503 or
    // no connection), so the in-flight request really straddles the shutdown.
    await waitFor(
      async () => {
        try {
          return (await fetch(`${ready.ingest as string}/healthz`)).status === 503;
        } catch {
          return true;
        }
      },
      10_000,
      "the ingest to refuse new requests after SIGTERM",
    );
    push(bytes.subarray(bytes.length / 2));
    push();
    expect((await inFlight).status).toBe(200);
    const exit = await Promise.race([
      proc.exited,
      new Promise((r) => setTimeout(() => r("still running after 5 s"), 5_000)),
    ]);
    expect(exit).toBe(0);
    expect(isAlive(proc.child.pid ?? -1)).toBe(false);
    expect(proc.output()).not.toContain(TOKEN);
    expect(proc.output()).not.toContain("wrong-token-wrong");

    const nc = await connect({ servers: nats.url, noAsyncTraces: true });
    const { events } = await readEventsStream(nc);
    await nc.close();
    expect(events).toHaveLength(40_000);
    // FNV-1a mod 3 (docs/ingest.md): s0 -> 1, s1 -> 0, s2 -> 0, s3 -> 2, s4 -> 0.
    const expected: Record<string, number> = { s0: 1, s1: 0, s2: 0, s3: 2, s4: 0 };
    const seen = new Map<string, Set<number>>();
    for (const e of events) seen.set(e.service, (seen.get(e.service) ?? new Set()).add(e.partition));
    expect(Object.fromEntries([...seen].map(([s, ps]) => [s, [...ps]]))).toEqual(
      Object.fromEntries(Object.entries(expected).map(([s, p]) => [s, [p]])),
    );
    expect(new Set(events.map((e) => e.partition))).toEqual(new Set([0, 1, 2]));
  });

  it("refuses to start against a mismatching TM_EVENTS, naming the field, and leaves the stream alone", async () => {
    const other = await startTestNats();
    try {
      const nc = await connect({ servers: other.url, noAsyncTraces: true });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: "TM_EVENTS", subjects: ["tm.events.*"], max_age: 60 * 1e9 });
      const proc = spawnTidemark([
        "ingest",
        "--port",
        String(await freePort()),
        "--grpc-port",
        "0",
        "--nats",
        other.url,
      ]);
      expect(await proc.exited).not.toBe(0);
      expect(proc.output()).toMatch(/TM_STREAM_MISMATCH/);
      expect(proc.output()).toMatch(/max_age: expected 86400000000000, found 60000000000/);
      expect((await jsm.streams.info("TM_EVENTS")).config.max_age).toBe(60 * 1e9);
      await nc.close();
    } finally {
      await other.stop();
    }
  });

  it("names the flag in a configuration error", async () => {
    const proc = spawnTidemark(["ingest", "--port", "99999", "--nats", nats.url]);
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toMatch(/TM_INGEST_CONFIG.*flag --port/);
  });
});
