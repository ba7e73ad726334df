import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Msg, MsgHdrs, Subscription } from "@nats-io/transport-node";
import { PaneSink, type AckPublisher, type PaneSinkOptions } from "./pane-sink.js";
import type { SweepReport } from "./resend-sweep.js";

/** A transport that records publishes and lets the test answer each with a PubAck (or not). */
class Wire implements AckPublisher {
  readonly sent: Array<{ subject: string; reply: string; msgID: string; body: string }> = [];
  /** Pings sent (flush calls) and whether the server answers them. */
  pings = 0;
  reading = true;
  private unanswered: Array<() => void> = [];
  private cb: ((err: Error | null, msg: Msg) => void) | undefined;
  publish(subject: string, payload: string | Uint8Array, opts: { reply: string; headers: MsgHdrs }): void {
    const body = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
    this.sent.push({ subject, reply: opts.reply, msgID: opts.headers.get("Nats-Msg-Id"), body });
  }
  subscribe(_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription {
    this.cb = opts.callback;
    return { unsubscribe: () => undefined } as Subscription;
  }
  flush(): Promise<void> {
    this.pings++;
    if (this.reading) return Promise.resolve();
    return new Promise((resolve) => this.unanswered.push(resolve));
  }
  /** The server reads again: the pings it owes are answered. */
  resume(): void {
    this.reading = true;
    for (const r of this.unanswered.splice(0)) r();
  }
  answer(i: number, ack: object): void {
    const s = this.sent[i];
    if (!s || !this.cb) throw new Error(`no publish ${i}`);
    const text = JSON.stringify(ack);
    this.cb(null, { subject: s.reply, string: () => text } as Msg);
  }
  /** What nats-server sends to the reply subject of a publish no one listens to: a 503 status, no body. */
  noResponders(i: number): void {
    const s = this.sent[i];
    if (!s || !this.cb) throw new Error(`no publish ${i}`);
    this.cb(null, { subject: s.reply, string: () => "", headers: { code: 503 } } as unknown as Msg);
  }
  ids(from = 0): string[] {
    return this.sent.slice(from).map((s) => s.msgID);
  }
}

/** A message as the worker hands one to the sink (emit-group.ts). */
function message(i: number): [string, string, string] {
  return [
    "tm.panes.dashboard.10000",
    `{"id":"dashboard|api|10000|${1000 * i}","seq":${i}}`,
    `0|${10 + i}|0|tm.panes.dashboard.10000|0`,
  ];
}

/** The sink with timeouts at the low end of their jitter: attempt k waits 2^k s (1, 2, 4, 8, 15, 15, …). */
function sink(wire: Wire, o: Partial<PaneSinkOptions> = {}): PaneSink {
  return new PaneSink(wire, { limits: { messages: 10, bytes: 1 << 20 }, random: () => 0, ...o });
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("PaneSink", () => {
  it("publishes each message to its subject with its Nats-Msg-Id; flush waits only for earlier publishes", async () => {
    const wire = new Wire();
    const s = sink(wire);
    s.publish(...message(0));
    s.publish(...message(1));
    expect(wire.sent.map((x) => [x.subject, x.body, x.msgID])).toEqual([message(0), message(1)]);
    let flushed = false;
    const f = s.flush().then(() => (flushed = true));
    s.publish(...message(2)); // after the flush: not waited for
    wire.answer(1, { stream: "TM_PANES", seq: 2 });
    await turn();
    expect(flushed).toBe(false);
    wire.answer(0, { stream: "TM_PANES", seq: 1, duplicate: true });
    await f;
    expect([flushed, s.inFlight, s.acked, s.duplicates]).toEqual([true, 1, 2, 1]);
    s.close();
  });

  it("sends an unacknowledged publish again with the same id and reply subject, each timeout twice the last", async () => {
    const wire = new Wire();
    const s = sink(wire);
    s.publish(...message(0));
    const times: number[] = [];
    for (let t = 250; t <= 40_000; t += 250) {
      await vi.advanceTimersByTimeAsync(250);
      if (wire.sent.length > times.length + 1) times.push(t);
    }
    // Attempts at 1 s, then 2, 4, 8 and 15 s later (capped at 30 s, half of it fixed).
    expect(times).toEqual([1_000, 3_000, 7_000, 15_000, 30_000]);
    expect(new Set(wire.sent.map((x) => `${x.msgID} ${x.reply}`)).size).toBe(1);
    expect(s.resends).toBe(5);
    s.close();
  });

  it("takes the ack of any attempt: a resent publish acknowledged by its first attempt's ack is done", async () => {
    const wire = new Wire();
    const s = sink(wire);
    s.publish(...message(0));
    vi.advanceTimersByTime(1_250);
    expect(wire.sent).toHaveLength(2);
    const f = s.flush();
    wire.answer(0, { stream: "TM_PANES", seq: 1 }); // the first attempt's ack, late
    await f;
    wire.answer(1, { stream: "TM_PANES", seq: 1, duplicate: true }); // the resend's: already done, ignored
    expect([s.acked, s.duplicates, s.inFlight, s.resends]).toEqual([1, 0, 0, 1]);
    s.close();
  });

  it("sends a refused publish again after its timeout, not at once, and a 503 status acknowledges nothing", async () => {
    const wire = new Wire();
    const errors: string[] = [];
    const s = sink(wire, { onError: (why) => errors.push(why) });
    s.publish(...message(0));
    s.publish(...message(1));
    wire.answer(0, { error: { code: 503, description: "no quorum" } });
    wire.noResponders(1);
    expect(wire.sent).toHaveLength(2);
    expect(errors).toEqual(['stream refused the publish: {"error":{"code":503,"description":"no quorum"}}']);
    let flushed = false;
    const f = s.flush().then(() => (flushed = true));
    vi.advanceTimersByTime(1_250);
    expect(wire.ids(2).sort()).toEqual([message(0)[2], message(1)[2]].sort());
    await turn();
    expect([flushed, s.acked, s.inFlight]).toEqual([false, 0, 2]);
    wire.answer(2, { stream: "TM_PANES", seq: 1 });
    wire.answer(3, { stream: "TM_PANES", seq: 2 });
    await f;
    expect([s.acked, s.inFlight, s.resends]).toEqual([2, 0, 2]);
    s.close();
  });

  it("sends at most 64 again per sweep, earliest due first, and reports each sweep in one line", async () => {
    const wire = new Wire();
    const reports: SweepReport[] = [];
    const s = sink(wire, { limits: { messages: 200, bytes: 1 << 20 }, onSweep: (r) => reports.push(r) });
    for (let i = 0; i < 100; i++) s.publish(...message(i));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(wire.sent).toHaveLength(164);
    expect(wire.ids(100)).toEqual(wire.ids(0).slice(0, 64));
    await vi.advanceTimersByTimeAsync(250);
    expect(wire.ids(164)).toEqual(wire.ids(0).slice(64, 100));
    expect(reports.map((r) => [r.resent, r.deferred, r.maxAttempt])).toEqual([
      [64, 36, 1],
      [36, 0, 1],
    ]);
    s.close();
  });

  it("sends nothing again while the server has not read the last resends (its PING unanswered)", async () => {
    const wire = new Wire();
    const reports: SweepReport[] = [];
    const s = sink(wire, { onSweep: (r) => reports.push(r) });
    s.publish(...message(0));
    s.publish(...message(1));
    wire.reading = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(wire.sent).toHaveLength(4);
    expect(wire.pings).toBe(1);
    // 20 s: both are due again and again, but the server reads nothing; one report per 5 s says so.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(wire.sent).toHaveLength(4);
    expect(reports.map((r) => [r.resent, r.deferred])).toEqual([
      [2, 0],
      [0, 2],
      [0, 2],
      [0, 2],
      [0, 2],
    ]);
    wire.resume();
    await vi.advanceTimersByTimeAsync(250);
    expect(wire.sent).toHaveLength(6);
    s.close();
  });

  it("keeps in flight within maxInFlight: the rest waits, in order, and goes as acks come; room at half", async () => {
    const wire = new Wire();
    const s = sink(wire, { limits: { messages: 4, bytes: 1 << 20 } });
    for (let i = 0; i < 6; i++) s.publish(...message(i));
    expect(wire.sent).toHaveLength(4);
    expect([s.saturated, s.stats().inFlight.messages, s.stats().waiting.messages]).toEqual([true, 4, 2]);
    let room = false;
    const r = s.room().then(() => (room = true));
    const f = s.flush();
    wire.answer(0, { seq: 1 });
    expect(wire.ids()).toEqual([0, 1, 2, 3, 4].map((i) => message(i)[2]));
    wire.answer(1, { seq: 2 });
    wire.answer(2, { seq: 3 });
    wire.answer(3, { seq: 4 });
    await turn();
    // Nothing waits, two in flight: not yet under half of 4.
    expect([room, s.window.peakMessages, s.stats().waiting.messages, s.inFlight]).toEqual([false, 4, 0, 2]);
    wire.answer(4, { seq: 5 });
    await r;
    expect([room, s.saturated, s.inFlight]).toEqual([true, false, 1]);
    wire.answer(5, { seq: 6 });
    await f; // a flush covers what waited too
    s.close();
  });

  it("counts bytes, not UTF-16 units; a body over the byte bound goes alone into an empty window", async () => {
    const wire = new Wire();
    const s = sink(wire, { limits: { messages: 100, bytes: 1000 } });
    s.publish("tm.panes.x.10000", "é".repeat(300), "a"); // 300 units, 600 bytes
    expect([s.saturated, s.stats().inFlight.bytes]).toEqual([false, 600]);
    s.publish("tm.panes.x.10000", "x".repeat(500), "b");
    expect([s.saturated, wire.sent.length, s.stats().waiting.bytes]).toEqual([true, 1, 500]);
    wire.answer(0, { seq: 1 });
    expect(wire.ids()).toEqual(["a", "b"]);
    s.publish("tm.panes.x.10000", new Uint8Array(5000), "huge");
    wire.answer(1, { seq: 2 });
    expect(wire.ids()).toEqual(["a", "b", "huge"]);
    expect(s.stats().inFlight).toEqual({ messages: 1, bytes: 5000 });
    wire.answer(2, { seq: 3 });
    await s.room();
    // A byte body counts the buffer it holds: a view at offset 0 of a larger buffer holds all of it.
    s.publish("tm.panes.x.10000", new Uint8Array(800).subarray(0, 300), "view");
    expect(s.stats().inFlight.bytes).toBe(800);
    s.close();
  });
});
