/** A malformed message in TM_EVENTS is reported and skipped; the engine neither crashes nor stalls. */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { headers } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { HEARTBEAT_HEADER, encodeEventBatch, eventsSubject, partitionOf } from "@tidemark/engine/protocol";
import { startTestNats, type TestNats } from "../index.js";
import { isAlive } from "../harness/processes.js";
import { connectNats, startEngine, stopGracefully, tempDir, waitForStatus } from "./engine-fixtures.js";

describe("malformed input on TM_EVENTS", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  it("is skipped and reported; well-formed events around it are processed", async () => {
    nats = await startTestNats();
    const nc = await connectNats(nats.url);
    try {
      const engine = startEngine(nats.url, join(tempDir("malformed"), "data"), ["--partition-count", "2"]);
      await engine.ready;
      const js = jetstream(nc);
      const t = 1_700_000_000_000;
      const good = { ts: t - 5, ingest_ts: t, service: "api", route: "/", status: 200, latency_ms: 3, user: "u" };
      const p = partitionOf("api", 2);
      await js.publish(eventsSubject(p), "this is not json\n");
      await js.publish(eventsSubject(p), encodeEventBatch([good]).trimEnd() + '\n{"ts":"noon","service":7}\n');
      for (let q = 0; q < 2; q++) {
        const h = headers();
        h.set(HEARTBEAT_HEADER, String(t + 1000));
        await js.publish(eventsSubject(q), "", { headers: h });
      }
      const s = await waitForStatus(nc, (x) => x.logTime === t + 1000, 20_000, "log time past the bad messages");
      expect(s.eventsTotal).toBe(1);
      expect(isAlive(engine.child.pid as number)).toBe(true);
      expect(engine.output()).toContain("undecodable event batch; skipped");
      expect(engine.output()).toContain("1 malformed events skipped");
      await stopGracefully(engine);
    } finally {
      await nc.close();
    }
  });
});
