import { describe, expect, it } from "vitest";
import { OrderedPublisher, type OrderedMessage } from "./ordered-publisher.js";

interface Msg extends OrderedMessage {
  n: number;
}

/**
 * A fake stream: a send is answered after `ackAfter` ms, or lost (never stored, answered with a
 * timeout) when `lose` says so; the store keeps arrival order and drops a repeated id.
 */
function fakeStream(lose: (m: Msg, attempt: number) => boolean, ackAfter = 1) {
  const stored: Msg[] = [];
  const firstSends: number[] = [];
  const attempts = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const send = async (m: Msg): Promise<{ duplicate: boolean }> => {
    const attempt = (attempts.get(m.msgId) ?? 0) + 1;
    attempts.set(m.msgId, attempt);
    if (attempt === 1) firstSends.push(m.n);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, ackAfter));
    inFlight--;
    if (lose(m, attempt)) throw Object.assign(new Error("timeout"), { name: "TimeoutError" });
    const duplicate = stored.some((s) => s.msgId === m.msgId);
    if (!duplicate) stored.push(m);
    return { duplicate };
  };
  return { stored, firstSends, attempts, send, maxInFlight: () => maxInFlight };
}

function messages(count: number, partitions: number): Msg[] {
  return Array.from({ length: count }, (_, n) => ({ partition: n % partitions, msgId: `m${n}`, n }));
}

function publisher(send: (m: Msg) => Promise<{ duplicate: boolean }>, retryForMs = 1_000): OrderedPublisher<Msg> {
  return new OrderedPublisher<Msg>({
    send,
    retryable: (err) => (err as Error).name === "TimeoutError",
    maxQueued: 16,
    retryForMs,
    retryDelayMs: 1,
    failed: (m, err) => new Error(`${m.msgId}: ${(err as Error).message}`),
  });
}

const order = (stored: Msg[], partition: number): number[] =>
  stored.filter((m) => m.partition === partition).map((m) => m.n);

describe("OrderedPublisher", () => {
  it("sends in the order given, pipelined across partitions, one publish in flight per partition", async () => {
    const s = fakeStream(() => false);
    const p = publisher(s.send);
    // Runs of distinct partitions, as the plan writes a second's batches then its heartbeats.
    const all = messages(200, 4);
    for (const m of all) await p.publish(m);
    await p.drain();
    expect(s.stored.map((m) => m.n)).toEqual(all.map((m) => m.n)); // a fresh stream: the same sequences every run
    expect(s.maxInFlight()).toBe(4);
    expect(p.duplicates).toBe(0);
    expect(p.queued).toBe(0);
  });

  it("holds a message, and everything after it, while an earlier one of its partition is unacknowledged", async () => {
    const s = fakeStream(() => false);
    const p = publisher(s.send);
    const all = [0, 0, 1, 2].map((partition, n) => ({ partition, msgId: `m${n}`, n }));
    for (const m of all) await p.publish(m);
    expect(s.firstSends).toEqual([0]); // m1 waits for m0; m2 and m3 wait behind m1
    await p.drain();
    expect(s.firstSends).toEqual([0, 1, 2, 3]);
  });

  it("sends a lost message again before anything after it on its partition (a reconnect leaves no gap)", async () => {
    // Messages 40..59 are lost on their first send, as if published into a dropped connection;
    // the ones after them must not be stored first, or a re-run would fill the gap at the end.
    const s = fakeStream((m, attempt) => m.n >= 40 && m.n < 60 && attempt === 1);
    const p = publisher(s.send);
    const all = messages(120, 3);
    for (const m of all) await p.publish(m);
    await p.drain();
    expect(s.stored).toHaveLength(120);
    for (let q = 0; q < 3; q++)
      expect(order(s.stored, q)).toEqual(all.filter((m) => m.partition === q).map((m) => m.n));
    expect(p.retries).toBe(20);
    expect(s.attempts.get("m39")).toBe(1);
    expect(s.attempts.get("m40")).toBe(2);
  });

  it("counts a resend whose first copy was stored as a duplicate", async () => {
    const s = fakeStream(() => false);
    let first = true;
    const p = publisher(async (m) => {
      const ack = await s.send(m);
      if (m.n === 5 && first) {
        first = false;
        throw Object.assign(new Error("ack lost"), { name: "TimeoutError" });
      }
      return ack;
    });
    for (const m of messages(10, 2)) await p.publish(m);
    await p.drain();
    expect(s.stored.map((m) => m.n).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(p.duplicates).toBe(1);
  });

  it("fails the run when a message stays unacknowledged, leaving no partition with a gap", async () => {
    const s = fakeStream((m) => m.n === 30);
    const p = publisher(s.send, 20);
    const all = messages(100, 2);
    const run = (async () => {
      for (const m of all) await p.publish(m);
      await p.drain();
    })();
    await expect(run).rejects.toThrow("m30: timeout");
    // Partition 0 stops before message 30; nothing of it after 30 was sent.
    expect(order(s.stored, 0)).toEqual(all.filter((m) => m.partition === 0 && m.n < 30).map((m) => m.n));
    expect(s.attempts.has("m32")).toBe(false);
    await expect(p.publish(all[0] as Msg)).rejects.toThrow("m30: timeout");
  });

  it("fails at once on an error that is not worth a resend", async () => {
    const p = publisher(async (m) => {
      if (m.n === 3) throw new Error("maximum payload exceeded");
      return { duplicate: false };
    });
    const run = (async () => {
      for (const m of messages(10, 2)) await p.publish(m);
      await p.drain();
    })();
    await expect(run).rejects.toThrow("m3: maximum payload exceeded");
    expect(p.retries).toBe(0);
  });
});
