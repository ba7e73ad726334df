import { afterEach, describe, expect, it, vi } from "vitest";
import type { Msg, MsgHdrs, Subscription } from "@nats-io/transport-node";
import { InboxAcks, type InboxTransport } from "./inbox-acks.js";

/** A connection that records publishes and lets the test answer each on its reply subject. */
class Wire implements InboxTransport {
  readonly sent: Array<{ subject: string; reply: string; msgID: string }> = [];
  subscriptions = 0;
  unsubscribed = 0;
  closed = false;
  private cb: ((err: Error | null, msg: Msg) => void) | undefined;
  publish(subject: string, _payload: Uint8Array, opts: { reply: string; headers: MsgHdrs }): void {
    if (this.closed) throw new Error("connection closed");
    this.sent.push({ subject, reply: opts.reply, msgID: opts.headers.get("Nats-Msg-Id") });
  }
  subscribe(_subject: string, opts: { callback: (err: Error | null, msg: Msg) => void }): Subscription {
    if (this.closed) throw new Error("connection closed");
    this.subscriptions++;
    this.cb = opts.callback;
    return { unsubscribe: () => void this.unsubscribed++ } as Subscription;
  }
  /** The server's reply to publish i: a body, and a status code for a status message. */
  reply(i: number, body: string, code?: number): void {
    const s = this.sent[i];
    if (!s || !this.cb) throw new Error(`no publish ${i}`);
    const data = new TextEncoder().encode(body);
    const headers = code === undefined ? undefined : ({ code, description: "No Responders" } as unknown as MsgHdrs);
    this.cb(null, { subject: s.reply, data, headers, string: () => body } as Msg);
  }
}

const PUB_ACK = '{"stream":"TM_PARTIALS","seq":7}';
const settled = async (p: Promise<void>): Promise<string> =>
  p.then(
    () => "acked",
    (err: Error) => `failed: ${err.message}`,
  );

afterEach(() => void vi.useRealTimers());

describe("InboxAcks", () => {
  it("publishes with the message id and a reply under one inbox, and resolves on the stream's PubAck", async () => {
    const wire = new Wire();
    const acks = new InboxAcks(wire);
    const a = acks.publish("tm.partials.0", new Uint8Array([1]), { msgID: "partial:w:1", timeout: 1000 });
    const b = acks.publish("tm.partials.0", new Uint8Array([2]), { msgID: "partial:w:2", timeout: 1000 });
    expect(wire.subscriptions).toBe(1);
    expect(wire.sent.map((s) => s.msgID)).toEqual(["partial:w:1", "partial:w:2"]);
    const inbox = (r: string): string => r.slice(0, r.lastIndexOf("."));
    expect(inbox(wire.sent[0]?.reply as string)).toBe(inbox(wire.sent[1]?.reply as string));
    expect(wire.sent[0]?.reply).not.toBe(wire.sent[1]?.reply);
    wire.reply(1, PUB_ACK);
    wire.reply(0, '{"stream":"TM_PARTIALS","seq":6,"duplicate":true}');
    expect(await settled(a)).toBe("acked");
    expect(await settled(b)).toBe("acked");
  });

  it("fails on no responders, on a refusal and when no answer comes within the timeout", async () => {
    vi.useFakeTimers();
    const wire = new Wire();
    const acks = new InboxAcks(wire);
    const opts = (id: string): { msgID: string; timeout: number } => ({ msgID: id, timeout: 500 });
    const none = settled(acks.publish("s", new Uint8Array(), opts("a")));
    const refused = settled(acks.publish("s", new Uint8Array(), opts("b")));
    const silent = settled(acks.publish("s", new Uint8Array(), opts("c")));
    wire.reply(0, "", 503);
    wire.reply(1, '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}');
    expect(await none).toBe("failed: no responders");
    expect(await refused).toMatch(/^failed: stream refused the publish: .*maximum messages exceeded/);
    await vi.advanceTimersByTimeAsync(499);
    wire.reply(0, PUB_ACK); // a second answer to a publish already settled: dropped
    await vi.advanceTimersByTimeAsync(1);
    expect(await silent).toBe("failed: no acknowledgement within 500 ms");
    wire.reply(2, PUB_ACK); // its ack, too late: dropped
  });

  it("fails a publish the connection refuses, and everything waiting at close", async () => {
    const wire = new Wire();
    const acks = new InboxAcks(wire);
    const waiting = settled(acks.publish("s", new Uint8Array(), { msgID: "a", timeout: 60_000 }));
    acks.close();
    expect(await waiting).toBe("failed: closed");
    expect(wire.unsubscribed).toBe(1);
    wire.closed = true;
    // After close it would subscribe again, which a closed connection refuses too: a failed promise, no throw.
    expect(await settled(acks.publish("s", new Uint8Array(), { msgID: "b", timeout: 60_000 }))).toBe(
      "failed: connection closed",
    );
  });
});
