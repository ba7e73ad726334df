import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { isAlive, startTestNats, type TestNats } from "../index.js";

describe("real nats-server with JetStream", () => {
  let nats: TestNats;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url, noAsyncTraces: true });
  });
  afterAll(async () => {
    await nc?.close();
    const pid = nats.pid();
    await nats.stop();
    expect(isAlive(pid)).toBe(false);
  });

  it("publishes to a stream and reads every message back in order through an ordered consumer", async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "RT", subjects: ["rt.>"] });
    const js = jetstream(nc);
    const sent = Array.from({ length: 50 }, (_, i) => `message ${i}`);
    for (const [i, body] of sent.entries()) {
      const h = headers();
      h.set("Nats-Msg-Id", `m${i}`);
      const ack = await js.publish(`rt.${i % 3}`, body, { headers: h });
      expect(ack.seq).toBe(i + 1);
    }
    // A duplicate Nats-Msg-Id inside the duplicate window is acknowledged but not stored again.
    const dup = headers();
    dup.set("Nats-Msg-Id", "m0");
    expect((await js.publish("rt.0", "again", { headers: dup })).duplicate).toBe(true);

    const consumer = await js.consumers.get("RT", { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 11 });
    const got: string[] = [];
    const messages = await consumer.consume();
    for await (const m of messages) {
      got.push(m.string());
      if (got.length === sent.length - 10) break;
    }
    expect(got).toEqual(sent.slice(10));
    expect((await jsm.streams.info("RT")).state.messages).toBe(50);
  });
});
