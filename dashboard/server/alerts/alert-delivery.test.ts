import { describe, expect, it } from "vitest";
import type { AlertNotice } from "../rules/index.js";
import { AlertDelivery } from "./alert-delivery.js";
import { AlertmanagerTarget, BATCH, nextBackoff, type PostableAlert, type Timers } from "./alertmanager-target.js";

/** Timers driven by hand: `run(ms)` moves a fake clock and fires what is due, in order. */
function fakeTimers() {
  let now = 0;
  let id = 0;
  const due = new Map<number, { at: number; fn: () => void; every?: number }>();
  const timers: Timers & {
    setInterval(fn: () => void, ms: number): unknown;
    clearInterval(h: unknown): void;
  } = {
    setTimeout: (fn, ms) => (due.set(++id, { at: now + ms, fn }), id),
    clearTimeout: (h) => void due.delete(h as number),
    setInterval: (fn, ms) => (due.set(++id, { at: now + ms, fn, every: ms }), id),
    clearInterval: (h) => void due.delete(h as number),
  };
  return {
    timers,
    now: () => now,
    /** The delays of the timeouts waiting. */
    waiting: () => [...due.values()].filter((d) => d.every === undefined).map((d) => d.at - now),
    async run(ms: number): Promise<void> {
      const until = now + ms;
      for (;;) {
        const next = [...due.entries()].sort((a, b) => a[1].at - b[1].at).find(([, d]) => d.at <= until);
        if (!next) break;
        const [key, d] = next;
        now = d.at;
        if (d.every === undefined) due.delete(key);
        else d.at += d.every;
        d.fn();
        await new Promise((r) => setImmediate(r));
      }
      now = until;
    },
  };
}

const alert = (name: string, endsAt = "2026-01-01T00:02:00.000Z"): PostableAlert => ({
  labels: { alertname: name },
  annotations: {},
  startsAt: "2026-01-01T00:00:00.000Z",
  endsAt,
  generatorURL: "http://dash/",
});

function target(answers: Array<number | Error>, queueSize = 100) {
  const t = fakeTimers();
  const posts: PostableAlert[][] = [];
  const counted = { sent: 0, failed: [] as string[], dropped: 0, queued: 0 };
  const am = new AlertmanagerTarget(
    "http://am:9093",
    { queueSize, maxBackoffMs: 8000 },
    async (url, body) => {
      expect(url).toBe("http://am:9093/api/v2/alerts");
      posts.push(JSON.parse(body) as PostableAlert[]);
      const a = answers.shift() ?? 200;
      if (a instanceof Error) throw a;
      return a;
    },
    {
      sent: (n) => (counted.sent += n),
      failed: (r) => counted.failed.push(r),
      dropped: (n) => (counted.dropped += n),
      queued: (n) => (counted.queued = n),
    },
    t.timers,
  );
  return { am, posts, counted, t };
}

describe("delivery to one Alertmanager: bounded queue, backoff, never blocking", () => {
  it("backs off 0.5 s, doubling, up to the most", () => {
    const waits: number[] = [];
    let w = 0;
    for (let i = 0; i < 6; i++) waits.push((w = nextBackoff(w, 8000)));
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it("retries while the Alertmanager is down, with growing waits, and delivers the newest state once it answers", async () => {
    const { am, posts, counted, t } = target([new Error("ECONNREFUSED"), 503, new Error("ECONNREFUSED")]);
    am.offer([["a", alert("A")]]);
    await t.run(0);
    expect(posts).toHaveLength(1);
    expect(t.waiting()).toEqual([500]);
    await t.run(500);
    expect(t.waiting()).toEqual([1000]);
    // A newer state of the same alert replaces the waiting one rather than queueing twice.
    am.offer([["a", alert("A", "2026-01-01T00:03:00.000Z")]]);
    await t.run(1000);
    expect(t.waiting()).toEqual([2000]);
    await t.run(2000);
    expect(posts.map((p) => p.map((a) => a.endsAt))).toEqual([
      ["2026-01-01T00:02:00.000Z"],
      ["2026-01-01T00:02:00.000Z"],
      ["2026-01-01T00:03:00.000Z"],
      ["2026-01-01T00:03:00.000Z"],
    ]);
    expect(counted).toMatchObject({ sent: 1, queued: 0 });
    expect(counted.failed).toEqual(["ECONNREFUSED", "HTTP 503", "ECONNREFUSED"]);
    expect(am.backoff).toBe(0);
  });

  it("drops the oldest waiting alerts past the queue size, counted", async () => {
    const { am, posts, counted, t } = target([], 3);
    am.offer(["a", "b", "c", "d", "e"].map((n) => [n, alert(n)] as const));
    expect(counted).toMatchObject({ dropped: 2, queued: 3 });
    await t.run(0);
    expect(posts[0]?.map((a) => a.labels["alertname"])).toEqual(["c", "d", "e"]);
  });

  it("sends in batches of 64 and does not retry what the Alertmanager refuses (4xx)", async () => {
    const { am, posts, counted, t } = target([400]);
    am.offer(Array.from({ length: BATCH + 1 }, (_, i) => [`f${i}`, alert(`A${i}`)] as const));
    await t.run(0);
    await t.run(0);
    expect(posts.map((p) => p.length)).toEqual([BATCH, 1]);
    expect(counted.failed).toEqual([`HTTP 400: refused ${BATCH} alerts`]);
    expect(counted.sent).toBe(1);
    expect(am.length).toBe(0);
  });
});

describe("AlertDelivery: resend firing alerts, resend resolutions for a while", () => {
  const notice = (fp: string): AlertNotice =>
    ({
      fingerprint: fp,
      labels: { alertname: "A", service: fp },
      annotations: { value: "0.2" },
      startsAt: 1000,
      generatorURL: "http://dash/",
    }) as unknown as AlertNotice;

  function rig() {
    const t = fakeTimers();
    const sent: PostableAlert[][] = [];
    const am = {
      offer: (alerts: ReadonlyArray<readonly [string, PostableAlert]>) => sent.push(alerts.map(([, a]) => a)),
      close: () => undefined,
    } as unknown as AlertmanagerTarget;
    const d = new AlertDelivery(
      [am, am],
      { resendMs: 30_000, resolvedResendMs: 60_000 },
      () => 1_000_000 + t.now(),
      t.timers,
    );
    return { d, sent, t };
  }

  it("sends nothing before start (the replay), then what fires and what ended lately, to every Alertmanager", async () => {
    const { d, sent } = rig();
    d.fired(notice("x"));
    d.fired(notice("y"));
    d.ended(notice("y"), "retracted", 990_000);
    expect(sent).toEqual([]);
    d.start();
    expect(sent).toHaveLength(2);
    expect(sent[0]).toEqual([
      { ...sent[0]?.[0], labels: { alertname: "A", service: "y" }, endsAt: new Date(990_000).toISOString() },
      {
        labels: { alertname: "A", service: "x" },
        annotations: { value: "0.2" },
        startsAt: new Date(1000).toISOString(),
        endsAt: new Date(1_000_000 + 4 * 30_000).toISOString(),
        generatorURL: "http://dash/",
      },
    ]);
    expect(sent[1]).toEqual(sent[0]);
  });

  it("resends firing alerts every resendMs with endsAt ahead; a resolution until resolvedResendMs passed", async () => {
    const { d, sent, t } = rig();
    d.start();
    d.fired(notice("x"));
    expect(sent.at(-1)?.map((a) => a.endsAt)).toEqual([new Date(1_120_000).toISOString()]);
    await t.run(30_000);
    expect(sent.at(-1)?.map((a) => a.endsAt)).toEqual([new Date(1_150_000).toISOString()]);
    d.ended(notice("x"), "resolved", 1_029_000);
    expect(sent.at(-1)?.map((a) => a.endsAt)).toEqual([new Date(1_029_000).toISOString()]);
    await t.run(60_000);
    expect(sent.at(-1)?.map((a) => a.endsAt)).toEqual([new Date(1_029_000).toISOString()]);
    const before = sent.length;
    await t.run(30_000);
    expect(sent.length).toBe(before);
  });

  it("never sends a resolution with endsAt after now or before startsAt", () => {
    const { d, sent } = rig();
    d.start();
    d.ended(notice("x"), "resolved", 5_000_000);
    expect(sent.at(-1)?.[0]?.endsAt).toBe(new Date(1_000_000).toISOString());
  });
});
