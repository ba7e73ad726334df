/**
 * NATS stopped mid-load: ingest answers 503 with Retry-After and /readyz fails; once NATS is back,
 * the clients' retries (same Idempotency-Key) are accepted, and every event ever answered 2xx is
 * in TM_EVENTS exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { waitFor } from "../index.js";
import { readEventsStream, startIngestFixture, type IngestFixture } from "./ingest-fixture.js";

const REQUESTS = 240;
const EVENTS_PER_REQUEST = 50;
const CLIENTS = 4;

describe("ingest while NATS goes away and comes back", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture({ ackTimeoutMs: "1s", partitionCount: 4 });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it(
    "answers 503 + Retry-After during the outage and stores every 2xx event exactly once after retries",
    { timeout: 180_000 },
    async () => {
      const statuses = new Map<number, number>();
      let retryAfterSeen = false;
      let answered2xx = 0;
      const acceptedUsers: string[] = [];
      let next = 0;
      // The last third of the requests waits until the outage is seen, so however fast the machine,
      // requests meet the outage (NATS is killed while the middle third is in flight).
      let outageSeen: () => void = () => undefined;
      const outage = new Promise<void>((r) => (outageSeen = r));

      async function send(i: number): Promise<void> {
        const body = Array.from({ length: EVENTS_PER_REQUEST }, (_, j) =>
          JSON.stringify({ service: `svc${(i + j) % 9}`, user: `u-${i}-${j}`, latency_ms: j }),
        ).join("\n");
        const deadline = Date.now() + 90_000;
        while (Date.now() < deadline) {
          let res: Response;
          try {
            res = await fx.post("/v1/events", body, "application/x-ndjson", { "idempotency-key": `load-${i}` });
          } catch {
            await new Promise((r) => setTimeout(r, 50));
            continue;
          }
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 200) {
            const json = (await res.json()) as { accepted: number };
            answered2xx++;
            expect(json.accepted).toBe(EVENTS_PER_REQUEST);
            for (let j = 0; j < EVENTS_PER_REQUEST; j++) acceptedUsers.push(`u-${i}-${j}`);
            return;
          }
          await res.arrayBuffer();
          expect([429, 503]).toContain(res.status);
          if (res.headers.get("retry-after") === "1") retryAfterSeen = true;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`request ${i} never succeeded`);
      }
      async function client(): Promise<void> {
        while (next < REQUESTS) {
          const i = next++;
          if (i >= (2 * REQUESTS) / 3) await outage;
          await send(i);
        }
      }

      const load = Promise.all(Array.from({ length: CLIENTS }, client));
      await waitFor(() => answered2xx >= REQUESTS / 3, 60_000, "a third of the load answered");
      await fx.nats.kill();
      await waitFor(async () => (await fetch(fx.ingest.url + "/readyz")).status === 503, 30_000, "/readyz failing");
      outageSeen();
      await waitFor(() => (statuses.get(503) ?? 0) >= 3, 30_000, "503 answers during the outage");
      const ready = await fetch(fx.ingest.url + "/readyz");
      expect(ready.status).toBe(503);
      expect(ready.headers.get("retry-after")).toBe("1");
      await fx.nats.start();
      await waitFor(async () => (await fetch(fx.ingest.url + "/readyz")).status === 200, 30_000, "/readyz recovering");
      await load;

      expect(retryAfterSeen).toBe(true);
      expect(answered2xx).toBe(REQUESTS);
      const nc = await connect({ servers: fx.nats.url, noAsyncTraces: true });
      const { events } = await readEventsStream(nc);
      await nc.close();
      const counts = new Map<string, number>();
      for (const e of events) counts.set(e.user, (counts.get(e.user) ?? 0) + 1);
      expect(acceptedUsers).toHaveLength(REQUESTS * EVENTS_PER_REQUEST);
      const missing = acceptedUsers.filter((u) => counts.get(u) === undefined);
      const twice = [...counts].filter(([, n]) => n > 1);
      expect({ missing: missing.length, twice: twice.length, stored: events.length }).toEqual({
        missing: 0,
        twice: 0,
        stored: REQUESTS * EVENTS_PER_REQUEST,
      });
    },
  );
});
