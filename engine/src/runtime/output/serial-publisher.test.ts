import { describe, expect, it } from "vitest";
import { SerialPublisher, type JoinRule, type RetryReport, type SerialPublisherOptions } from "./serial-publisher.js";

/** A stream that stores what it acknowledges; `failing` publishes fail (each time listed; if `lost`, not stored). */
function fakeStream(failing: string[], lost: boolean) {
  const stored: string[] = [];
  const sent: string[] = [];
  const timeouts: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let release: (() => void) | undefined;
  const js = {
    /** While set, publishes wait for `go()`. */
    hold: false,
    publish: async (_subject: string, _body: Uint8Array, opts: { msgID: string; timeout: number }) => {
      sent.push(opts.msgID);
      timeouts.push(opts.timeout);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => (js.hold ? (release = r) : setTimeout(r, 1)));
      inFlight--;
      const i = failing.indexOf(opts.msgID);
      if (i >= 0) {
        failing.splice(i, 1);
        if (!lost) stored.push(opts.msgID);
        throw new Error("timeout");
      }
      if (!stored.includes(opts.msgID)) stored.push(opts.msgID);
      return { seq: stored.length, duplicate: false, stream: "TM_PARTIALS" };
    },
  };
  const go = (): void => release?.();
  return { js, stored, sent, timeouts, go, maxInFlight: () => maxInFlight };
}

/** Timeouts at the low end of their jitter (1, 2, 4, 8 s, …), sleeps recorded and not slept. */
function publisher(js: object, o: Partial<SerialPublisherOptions> = {}) {
  const sleeps: number[] = [];
  const retries: RetryReport[] = [];
  const p = new SerialPublisher(js as never, {
    limits: { messages: 100, bytes: 1 << 20 },
    random: () => 0,
    clock: () => 0,
    sleep: async (ms) => void sleeps.push(ms),
    onRetry: (r) => retries.push(r),
    ...o,
  });
  return { p, sleeps, retries };
}

describe("SerialPublisher", () => {
  it("stores messages in the order given though one fails, one in flight at a time; flush waits for every ack", async () => {
    for (const lost of [true, false]) {
      const s = fakeStream(["m2"], lost);
      const { p, retries } = publisher(s.js);
      for (let i = 0; i < 6; i++) p.publish("tm.partials.0", new Uint8Array([i]), `m${i}`);
      expect(p.queued).toBe(6);
      await p.flush();
      expect(p.queued).toBe(0);
      expect(s.stored).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
      expect(s.sent).toEqual(["m0", "m1", "m2", "m2", "m3", "m4", "m5"]);
      expect(s.maxInFlight()).toBe(1);
      expect(retries.map((r) => [r.why, r.attempt])).toEqual([["timeout", 0]]);
      expect(p.resends).toBe(1);
    }
  });

  it("spaces attempts by their timeouts, doubling with each: a fast failure waits out the rest of it", async () => {
    const s = fakeStream(["a", "a", "a", "a"], true);
    const { p, sleeps, retries } = publisher(s.js);
    p.publish("tm.partials.0", new Uint8Array(1), "a");
    await p.flush();
    // Each attempt's own timeout given to the client, and (the clock standing still) waited out in full.
    expect(s.timeouts).toEqual([1_000, 2_000, 4_000, 8_000, 15_000]);
    expect(sleeps).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(retries.map((r) => r.nextInMs)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(s.stored).toEqual(["a"]);
  });

  it("is saturated at its bound in messages or bytes, has room below half, and counts the head in flight", async () => {
    const s = fakeStream([], false);
    s.js.hold = true;
    const { p } = publisher(s.js, { limits: { messages: 4, bytes: 1000 } });
    for (let i = 0; i < 3; i++) p.publish("tm.partials.0", new Uint8Array(100), `m${i}`);
    await new Promise((r) => setImmediate(r));
    expect(p.stats()).toMatchObject({ inFlight: { messages: 1, bytes: 100 }, waiting: { messages: 2, bytes: 200 } });
    expect(p.saturated).toBe(false);
    p.publish("tm.partials.0", new Uint8Array(700), "big");
    expect(p.saturated).toBe(true); // 1000 bytes
    let room = false;
    const r = p.room().then(() => (room = true));
    s.js.hold = false;
    s.go();
    await p.flush();
    await r;
    expect([room, p.saturated, p.queued]).toEqual([true, false, 0]);
  });

  it("flush resolves at once when nothing is unacknowledged, and does not wait for later messages", async () => {
    const s = fakeStream([], false);
    const { p } = publisher(s.js);
    await p.flush();
    p.publish("s", new Uint8Array(), "a");
    const first = p.flush();
    p.publish("s", new Uint8Array(), "b");
    await first;
    expect(s.stored).toContain("a");
    await p.flush();
    expect(s.stored).toEqual(["a", "b"]);
  });

  it("with a join rule, sends what waited behind the message in flight as one run: in order, within its bounds, headers alone", async () => {
    const s = fakeStream([], false);
    s.js.hold = true;
    const { p } = publisher(s.js, { join: JOIN });
    const bytes = new Map<string, number>();
    const put = (id: string, n = 1, subject = "tm.partials.0", headers?: object): void => {
      bytes.set(id, n);
      p.publish(subject, new Uint8Array(n), id, headers as never);
    };
    put("m0");
    await until(() => s.sent.length === 1);
    put("m1");
    put("m2");
    put("b3", 1, "tm.partials.0", { barrier: 1 });
    for (const id of ["m4", "m5", "m6", "m7"]) put(id);
    put("x8", 1, "tm.partials.1");
    put("m9", 60);
    put("m10", 50);
    put("m11", 10);
    expect(p.stats()).toMatchObject({ inFlight: { messages: 1 }, waiting: { messages: 11 } });
    s.js.hold = false;
    s.go();
    await p.flush();
    // Runs of at most 3 messages and 100 bytes, never past a message with headers or on another subject.
    expect(s.sent).toEqual(["m0", "m1+m2", "b3", "m4+m5+m6", "m7", "x8", "m9", "m10+m11"]);
    expect(s.stored).toEqual(s.sent);
    expect(p.queued).toBe(0);
  });

  it("sends a failed run again as the same run, though more messages wait by then", async () => {
    for (const lost of [true, false]) {
      const s = fakeStream(["a1+a2"], lost);
      s.js.hold = true;
      const { p } = publisher(s.js, { join: JOIN });
      p.publish("s", new Uint8Array(1), "a0");
      await until(() => s.sent.length === 1);
      p.publish("s", new Uint8Array(1), "a1");
      p.publish("s", new Uint8Array(1), "a2");
      s.go();
      await until(() => s.sent.length === 2);
      expect(p.stats()).toMatchObject({ inFlight: { messages: 2, bytes: 2 }, waiting: { messages: 0 } });
      p.publish("s", new Uint8Array(1), "a3");
      s.js.hold = false;
      s.go();
      await p.flush();
      expect(s.sent).toEqual(["a0", "a1+a2", "a1+a2", "a3"]);
      expect(s.stored).toEqual(["a0", "a1+a2", "a3"]);
    }
  });
});

/** Runs of at most 3 messages and 100 bytes; a run's id lists its messages'. */
const JOIN: JoinRule = {
  maxMessages: 3,
  maxBytes: 100,
  join: (items) => ({
    body: new Uint8Array(items.reduce((n, it) => n + it.body.length, 0)),
    msgID: items.map((it) => it.msgID).join("+"),
  }),
};

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setImmediate(r));
  expect(ok()).toBe(true);
}
