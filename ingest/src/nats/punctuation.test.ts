import { afterEach, describe, expect, it, vi } from "vitest";
import type { Logger } from "pino";
import { HEARTBEAT_HEADER } from "@tidemark/engine/protocol";
import { IngestClock } from "../events/ingest-clock.js";
import { createIngestMetrics } from "../metrics.js";
import type { NatsLink } from "./nats-link.js";
import { Punctuation } from "./punctuation.js";

/** A link that records each heartbeat published: [wall clock, partition subject, its ingest_ts]. */
function rig(everyMs: number) {
  let wall = 1_000_000;
  const sent: Array<[number, string, number]> = [];
  const link = {
    isConnected: true,
    acks: {
      publish: (subject: string, _body: unknown, opts: { headers: { get(k: string): string } }) => {
        sent.push([wall, subject, Number(opts.headers.get(HEARTBEAT_HEADER))]);
        return Promise.resolve();
      },
    },
  } as unknown as NatsLink;
  const clock = new IngestClock(() => wall);
  const metrics = createIngestMetrics(() => 0);
  const p = new Punctuation(link, clock, 3, everyMs, 5_000, metrics, {} as Logger, () => wall);
  return {
    p,
    clock,
    sent,
    advance: (ms: number) => {
      wall += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("Punctuation", () => {
  it("heartbeats every partition strictly after the published events, at most once per interval", () => {
    vi.useFakeTimers();
    const r = rig(100);
    const t = r.clock.now(); // a request's ingest_ts
    r.p.published();
    expect(r.sent.map(([, s, ts]) => [s, ts])).toEqual([
      ["tm.events.0", t + 1],
      ["tm.events.1", t + 1],
      ["tm.events.2", t + 1],
    ]);
    // More requests within the interval: one round when it has passed, after all of them.
    r.advance(30);
    const t2 = r.clock.now();
    r.p.published();
    r.advance(30);
    r.p.published();
    expect(r.sent).toHaveLength(3);
    r.advance(39);
    expect(r.sent).toHaveLength(3);
    r.advance(1);
    expect(r.sent).toHaveLength(6);
    expect(r.sent.slice(3).every(([wall, , ts]) => wall === 1_000_100 && ts > t2)).toBe(true);
    // Nothing published: nothing sent.
    r.advance(1_000);
    expect(r.sent).toHaveLength(6);
    // An ingest_ts after the punctuation never goes below it.
    expect(r.clock.now()).toBeGreaterThanOrEqual(r.sent[5]?.[2] as number);
  });

  it("sends nothing when off (interval 0)", () => {
    vi.useFakeTimers();
    const r = rig(0);
    r.p.published();
    r.advance(500);
    expect(r.sent).toEqual([]);
  });
});

describe("IngestClock.next", () => {
  it("is strictly greater than everything returned before, and follows the wall clock when it is ahead", () => {
    let wall = 10;
    const c = new IngestClock(() => wall);
    expect([c.now(), c.next(), c.next(), c.now()]).toEqual([10, 11, 12, 12]);
    wall = 20;
    expect([c.next(), c.now()]).toEqual([20, 20]);
  });
});
