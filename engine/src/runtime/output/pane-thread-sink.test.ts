import { MessageChannel } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import type { Msg, MsgHdrs, Subscription } from "@nats-io/transport-node";
import type { AckPublisher } from "./pane-sink.js";
import { servePanePort, type PanePort } from "./pane-publisher.js";
import { PaneThreadSink, type PublisherPort } from "./pane-thread-sink.js";

/** A transport that records publishes (bytes as text) and lets the test answer each with a PubAck. */
class Wire implements AckPublisher {
  readonly sent: Array<{ subject: string; reply: string; msgID: string; body: string }> = [];
  private cb: ((err: Error | null, msg: Msg) => void) | undefined;
  publish(subject: string, payload: string | Uint8Array, opts: { reply: string; headers: MsgHdrs }): void {
    const body = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
    this.sent.push({ subject, reply: opts.reply, msgID: opts.headers.get("Nats-Msg-Id"), body });
  }
  subscribe(_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription {
    this.cb = opts.callback;
    return { unsubscribe: () => undefined } as Subscription;
  }
  answer(i: number): void {
    const s = this.sent[i];
    if (!s || !this.cb) throw new Error(`no publish ${i}`);
    const text = JSON.stringify({ stream: "TM_PANES", seq: i + 1 });
    this.cb(null, { subject: s.reply, string: () => text } as Msg);
  }
}

/** The publisher's protocol served on one end of a channel, the sink on the other: the thread without the thread. */
function rig(maxInFlight = 10, maxUnits?: number): { sink: PaneThreadSink; wire: Wire; served: Promise<void> } {
  const { port1, port2 } = new MessageChannel();
  const wire = new Wire();
  const opts = { natsUrl: "unused", maxInFlight, maxInFlightBytes: maxUnits ?? 1 << 26 };
  const served = servePanePort(port2 as unknown as PanePort, wire, opts);
  const limits = { messages: maxInFlight, bytes: opts.maxInFlightBytes };
  const sink = new PaneThreadSink(port1 as unknown as PublisherPort, limits, undefined, () => {
    port1.unref();
    port2.unref();
  });
  return { sink, wire, served };
}

const body = (i: number): Uint8Array => new TextEncoder().encode(`{"id":"dashboard|api|10000|${1000 * i}","seq":${i}}`);
const id = (i: number): string => `0|${10 + i}|tm.panes.dashboard.10000|0`;
/** Until the other end has handled what was posted (a port delivers on a later turn). */
const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("PaneThreadSink over the pane publisher protocol", () => {
  it("hands each body over (transferred, not copied) with its subject and id, in order", async () => {
    const { sink, wire, served } = rig();
    const b0 = body(0);
    sink.publish("tm.panes.dashboard.10000", b0, id(0));
    sink.publish("tm.late.dashboard", body(1), id(1));
    expect(b0.byteLength).toBe(0); // detached: the thread owns it now
    await turns();
    expect(wire.sent.map((s) => [s.subject, s.msgID, s.body])).toEqual([
      ["tm.panes.dashboard.10000", id(0), new TextDecoder().decode(body(0))],
      ["tm.late.dashboard", id(1), new TextDecoder().decode(body(1))],
    ]);
    // A body at offset 0 of a larger buffer takes the buffer along (JsonLines' bodies); one further in is copied.
    const front = new Uint8Array(64);
    sink.publish("tm.panes.dashboard.10000", front.subarray(0, 16), id(2));
    expect(front.byteLength).toBe(0);
    const inner = new Uint8Array(64);
    sink.publish("tm.panes.dashboard.10000", inner.subarray(8, 16), id(3));
    expect(inner.byteLength).toBe(64);
    await turns();
    expect(wire.sent.map((s) => s.body.length)).toEqual([body(0).length, body(1).length, 16, 8]);
    sink.close();
    await served;
  });

  it("counts in flight until the thread reports the acks; flush waits for the publishes before it only", async () => {
    const { sink, wire, served } = rig();
    sink.publish("tm.panes.dashboard.10000", body(0), id(0));
    sink.publish("tm.panes.dashboard.10000", body(1), id(1));
    let flushed = false;
    const f = sink.flush().then(() => (flushed = true));
    sink.publish("tm.panes.dashboard.10000", body(2), id(2)); // after the flush: not waited for
    await turns();
    expect(sink.inFlight).toBe(3);
    wire.answer(1);
    await turns();
    expect([flushed, sink.inFlight, sink.acked]).toEqual([false, 2, 1]);
    wire.answer(0);
    await f;
    expect([flushed, sink.inFlight, sink.acked]).toEqual([true, 1, 2]);
    const returned: number[] = [];
    sink.onReturned = (b) => returned.push(b.byteLength);
    wire.answer(2);
    await turns();
    expect([sink.inFlight, sink.acked]).toEqual([0, 3]);
    expect(returned).toEqual([body(2).length]); // the acknowledged body's buffer, back for reuse
    await sink.flush(); // nothing pending: at once
    sink.close();
    await served;
  });

  it("is saturated at the bound in messages or bytes, and has room again below half of it", async () => {
    const { sink, wire, served } = rig(4);
    for (let i = 0; i < 4; i++) sink.publish("tm.panes.dashboard.10000", body(i), id(i));
    expect(sink.saturated).toBe(true);
    let roomy = false;
    const r = sink.room().then(() => (roomy = true));
    await turns();
    wire.answer(0);
    await turns();
    expect([sink.saturated, roomy]).toEqual([false, false]); // 3 pending: not below half
    wire.answer(1);
    wire.answer(2);
    await r;
    expect(roomy).toBe(true);
    sink.close();
    await served;

    const bytes = rig(100, 100);
    bytes.sink.publish("tm.panes.dashboard.10000", new Uint8Array(60), id(0));
    expect(bytes.sink.saturated).toBe(false);
    bytes.sink.publish("tm.panes.dashboard.10000", new Uint8Array(60), id(1));
    expect(bytes.sink.saturated).toBe(true);
    await turns();
    bytes.wire.answer(0);
    await turns();
    expect(bytes.sink.saturated).toBe(false);
    bytes.sink.close();
    await bytes.served;
  });

  it("keeps what the window does not admit on the main thread, in order; a flush waits behind it", async () => {
    const { sink, wire, served } = rig(2);
    for (let i = 0; i < 5; i++) sink.publish("tm.panes.dashboard.10000", body(i), id(i));
    let flushed = false;
    const f = sink.flush().then(() => (flushed = true));
    await turns();
    expect(wire.sent.map((x) => x.msgID)).toEqual([id(0), id(1)]);
    expect(sink.stats().waiting.messages).toBe(3);
    for (let i = 0; i < 4; i++) {
      wire.answer(i);
      await turns();
    }
    expect(wire.sent.map((x) => x.msgID)).toEqual([0, 1, 2, 3, 4].map(id));
    expect([flushed, sink.window.peakMessages]).toEqual([false, 2]);
    wire.answer(4);
    await f;
    expect([flushed, sink.inFlight, sink.stats().waiting.messages]).toEqual([true, 0, 0]);
    sink.close();
    await served;
  });
});
