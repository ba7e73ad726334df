import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import {
  ensureStream,
  eventsStreamSpec,
  lateStreamSpec,
  panesStreamSpec,
  StreamMismatchError,
} from "@tidemark/engine/nats";
import { startTestNats, type TestNats } from "../index.js";

describe("ensureStream against a real nats-server", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url, noAsyncTraces: true });
    jsm = await jetstreamManager(nc);
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it("creates TM_EVENTS, TM_PANES and TM_LATE as specified, then finds them as they are", async () => {
    for (const spec of [eventsStreamSpec(), panesStreamSpec(), lateStreamSpec()]) {
      expect(await ensureStream(jsm, spec)).toBe("created");
      expect(await ensureStream(jsm, spec)).toBe("exists");
    }
    const events = (await jsm.streams.info("TM_EVENTS")).config;
    expect(events.subjects).toEqual(["tm.events.*"]);
    expect(events.storage).toBe("file");
    expect(events.retention).toBe("limits");
    expect(events.max_age).toBe(24 * 3600 * 1e9);
    expect(events.duplicate_window).toBe(120 * 1e9);
    expect((await jsm.streams.info("TM_PANES")).config.subjects).toEqual(["tm.panes.>"]);
    expect((await jsm.streams.info("TM_LATE")).config.subjects).toEqual(["tm.late.>"]);
  });

  it("refuses a mismatching existing stream with TM_STREAM_MISMATCH naming the field, and leaves it unchanged", async () => {
    await jsm.streams.add({
      name: "TM_MISMATCH",
      subjects: ["tm.mismatch.*"],
      max_age: 3600 * 1e9,
      duplicate_window: 10 * 1e9,
    });
    const spec = { ...eventsStreamSpec(), name: "TM_MISMATCH", subjects: ["tm.mismatch.*"] };
    const err = await ensureStream(jsm, spec).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamMismatchError);
    const mismatch = err as StreamMismatchError;
    expect(mismatch.code).toBe("TM_STREAM_MISMATCH");
    expect(mismatch.message).toMatch(/max_age: expected 86400000000000, found 3600000000000/);
    expect(mismatch.message).toMatch(/duplicate_window: expected 120000000000, found 10000000000/);
    expect(mismatch.differences).toHaveLength(2);
    expect(mismatch.message).toMatch(/delete it/);
    expect((await jsm.streams.info("TM_MISMATCH")).config.max_age).toBe(3600 * 1e9);
  });

  it("creates concurrently from two callers without failing", async () => {
    const spec = { ...eventsStreamSpec(), name: "TM_RACE", subjects: ["tm.race.*"] };
    const results = await Promise.all([ensureStream(jsm, spec), ensureStream(jsm, spec)]);
    for (const r of results) expect(["created", "exists"]).toContain(r);
    expect(await ensureStream(jsm, spec)).toBe("exists");
    expect((await jsm.streams.info("TM_RACE")).config.subjects).toEqual(["tm.race.*"]);
  });
});
