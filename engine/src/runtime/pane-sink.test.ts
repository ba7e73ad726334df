import { afterEach, describe, expect, it, vi } from "vitest";
import type { Msg, MsgHdrs, Subscription } from "@nats-io/transport-node";
import { PaneSink, type AckPublisher } from "./pane-sink.js";

/** A transport that records publishes and lets the test answer each with a PubAck (or not). */
class Wire implements AckPublisher {
  readonly sent: Array<{ subject: string; reply: string; msgID: string; body: string }> = [];
  private cb: ((err: Error | null, msg: Msg) => void) | undefined;
  publish(subject: string, payload: string, opts: { reply: string; headers: MsgHdrs }): void {
    this.sent.push({ subject, reply: opts.reply, msgID: opts.headers.get("Nats-Msg-Id"), body: payload });
  }
  subscribe(_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription {
    this.cb = opts.callback;
    return { unsubscribe: () => undefined } as Subscription;
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
}

/** A message as the worker hands one to the sink (emit-group.ts). */
function message(i: number): [string, string, string] {
  return [
    "tm.panes.dashboard.10000",
    `{"id":"dashboard|api|10000|${1000 * i}","seq":${i}}`,
    `0|${10 + i}|0|tm.panes.dashboard.10000|0`,
  ];
}

afterEach(() => {
  vi.useRealTimers();
});

describe("PaneSink", () => {
  it("publishes each message to its subject with its Nats-Msg-Id; flush waits only for earlier publishes", async () => {
    const wire = new Wire();
    const sink = new PaneSink(wire, 10);
    sink.publish(...message(0));
    sink.publish(...message(1));
    expect(wire.sent.map((s) => [s.subject, s.body, s.msgID])).toEqual([message(0), message(1)]);
    let flushed = false;
    const f = sink.flush().then(() => (flushed = true));
    sink.publish(...message(2)); // after the flush: not waited for
    wire.answer(1, { stream: "TM_PANES", seq: 2 });
    await Promise.resolve();
    expect(flushed).toBe(false);
    wire.answer(0, { stream: "TM_PANES", seq: 1, duplicate: true });
    await f;
    expect([flushed, sink.inFlight, sink.acked, sink.duplicates]).toEqual([true, 1, 2, 1]);
    sink.close();
  });

  it("sends again, with the same id, what the stream refused or never acknowledged", async () => {
    vi.useFakeTimers();
    const wire = new Wire();
    const errors: string[] = [];
    const sink = new PaneSink(wire, 10, (why) => errors.push(why), 1000);
    sink.publish(...message(0));
    sink.publish(...message(1));
    wire.answer(0, { error: { code: 503, description: "no quorum" } });
    expect(wire.sent.length).toBe(3);
    expect(wire.sent[2]?.msgID).toBe(wire.sent[0]?.msgID);
    vi.advanceTimersByTime(1300); // publish 1 and the resend of 0 time out
    expect(
      wire.sent
        .slice(3)
        .map((s) => s.msgID)
        .sort(),
    ).toEqual([wire.sent[0]?.msgID, wire.sent[1]?.msgID].sort());
    const f = sink.flush();
    wire.answer(1, { stream: "TM_PANES", seq: 9 }); // a stale ack of a resent publish is ignored
    expect(sink.acked).toBe(0);
    wire.answer(3, { stream: "TM_PANES", seq: 1 });
    wire.answer(4, { stream: "TM_PANES", seq: 2 });
    await f;
    expect([sink.acked, sink.inFlight, sink.retries]).toEqual([2, 0, 3]);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    sink.close();
  });

  it("takes a 503 no-responders status (no stream listening yet) for no ack, and sends the publish again", async () => {
    vi.useFakeTimers();
    const wire = new Wire();
    const errors: string[] = [];
    const sink = new PaneSink(wire, 10, (why) => errors.push(why), 1000);
    sink.publish(...message(0));
    let flushed = false;
    const f = sink.flush().then(() => (flushed = true));
    wire.noResponders(0);
    await Promise.resolve();
    expect([flushed, sink.acked, sink.inFlight]).toEqual([false, 0, 1]);
    expect(wire.sent).toHaveLength(1); // not at once: a stream down for a while is retried at the ack timeout
    vi.advanceTimersByTime(1300);
    expect(errors).toEqual(["1 publishes unacknowledged after 1000 ms; sending them again"]);
    expect(wire.sent.map((s) => s.msgID)).toEqual([message(0)[2], message(0)[2]]);
    wire.answer(1, { stream: "TM_PANES", seq: 1 });
    await f;
    expect([flushed, sink.acked, sink.inFlight, sink.retries]).toEqual([true, 1, 0, 1]);
    sink.close();
  });

  it("is saturated at maxInFlight and makes room once half is acknowledged", async () => {
    const wire = new Wire();
    const sink = new PaneSink(wire, 4);
    for (let i = 0; i < 4; i++) sink.publish(...message(i));
    expect(sink.saturated).toBe(true);
    let room = false;
    const r = sink.room().then(() => (room = true));
    wire.answer(0, { seq: 1 });
    wire.answer(1, { seq: 2 });
    await Promise.resolve();
    expect(room).toBe(false);
    wire.answer(2, { seq: 3 });
    await r;
    expect([room, sink.saturated]).toEqual([true, false]);
    sink.close();
  });

  it("is saturated by unacknowledged bytes too, and makes room once they are under half", async () => {
    const wire = new Wire();
    const sink = new PaneSink(wire, 100, undefined, 5_000, 1000);
    sink.publish("tm.panes.x.10000", "x".repeat(600), "a");
    expect(sink.saturated).toBe(false);
    sink.publish("tm.panes.x.10000", "x".repeat(400), "b");
    expect(sink.saturated).toBe(true);
    const r = sink.room();
    wire.answer(0, { seq: 1 });
    await r;
    expect([sink.saturated, sink.inFlight]).toEqual([false, 1]);
    sink.close();
  });
});
