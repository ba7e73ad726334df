import { describe, expect, it } from "vitest";
import { SerialPublisher } from "./serial-publisher.js";

/** A stream that stores what it acknowledges; `failing` publishes time out once (and, if `lost`, are not stored). */
function fakeStream(failing: Set<string>, lost: boolean) {
  const stored: string[] = [];
  const sent: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const js = {
    publish: async (_subject: string, _body: Uint8Array, opts: { msgID: string }) => {
      sent.push(opts.msgID);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      if (failing.delete(opts.msgID)) {
        if (!lost) stored.push(opts.msgID);
        throw new Error("timeout");
      }
      if (!stored.includes(opts.msgID)) stored.push(opts.msgID);
      return { seq: stored.length, duplicate: false, stream: "TM_PARTIALS" };
    },
  };
  return { js, stored, sent, maxInFlight: () => maxInFlight };
}

describe("SerialPublisher", () => {
  it("stores messages in the order given though one fails, one in flight at a time; flush waits for every ack", async () => {
    for (const lost of [true, false]) {
      const s = fakeStream(new Set(["m2"]), lost);
      const errors: string[] = [];
      const p = new SerialPublisher(s.js as never, (why) => errors.push(why));
      for (let i = 0; i < 6; i++) p.publish("tm.partials.0", new Uint8Array([i]), `m${i}`);
      expect(p.queued).toBe(6);
      await p.flush();
      expect(p.queued).toBe(0);
      expect(s.stored).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
      expect(s.sent).toEqual(["m0", "m1", "m2", "m2", "m3", "m4", "m5"]);
      expect(s.maxInFlight()).toBe(1);
      expect(errors).toEqual(["timeout"]);
    }
  });

  it("flush resolves at once when nothing is unacknowledged, and does not wait for later messages", async () => {
    const s = fakeStream(new Set(), false);
    const p = new SerialPublisher(s.js as never);
    await p.flush();
    p.publish("s", new Uint8Array(), "a");
    const first = p.flush();
    p.publish("s", new Uint8Array(), "b");
    await first;
    expect(s.stored).toContain("a");
    await p.flush();
    expect(s.stored).toEqual(["a", "b"]);
  });
});
