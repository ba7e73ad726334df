import { describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { PaneStore } from "./pane-store.js";
import { testPane } from "../protocol/pane.fixture.js";
import { SessionBook } from "./session-book.js";

const GAP = 20_000;

/** A session pane of alerting for (api, user): first ts, last ts, requests, errors. */
function session(
  user: string,
  first: number,
  last: number,
  seq: number,
  kind: Pane["kind"],
  count: number,
  errors: number,
): Pane {
  const base = testPane({ policy: "alerting", count, errors, seq, kind });
  return {
    ...base,
    id: `alerting|session:api/${user}|${GAP}|${first}`,
    key: { service: "api", user },
    window: { start: first, end: last + GAP },
    value: { ...base.value, users: 1, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0 },
    bias: { countPct: -2.5, errorRatePp: 0.5, p99Pct: null, usersPct: null, windows: 3 },
    session: { durationMs: last - first, firstRoute: "/a", lastRoute: "/b" },
  };
}

/** Derived panes through a real pane store, as the dashboard keeps them. */
function run(panes: Pane[]): PaneStore {
  const book = new SessionBook(720);
  const store = new PaneStore(720);
  for (const p of panes) for (const d of book.apply(p)) store.upsert(d, JSON.stringify(d));
  return store;
}

function values(store: PaneStore, windowMs: number): Record<number, [number, number, number]> {
  const out: Record<number, [number, number, number]> = {};
  for (const s of store.select({ policy: "alerting", windowMs, metric: "sessions" }))
    out[s.pane.window.start] = [s.pane.value.count, s.pane.value.errors, s.pane.value.users];
  return out;
}

describe("SessionBook", () => {
  const u1a = session("u1", 1_000, 1_000, 1, "early", 3, 0);
  const u1b = session("u1", 50_000, 55_000, 2, "on-time", 2, 1);
  const u2 = session("u2", 2_000, 10_000, 3, "on-time", 4, 0);
  // A late event at 30 s bridges u1's two sessions: both are retracted, the merged one follows.
  const merge = [
    { ...u1b, seq: 4, kind: "retract" as const },
    { ...u1a, seq: 5, kind: "retract" as const },
    session("u1", 1_000, 55_000, 6, "late", 6, 1),
  ];

  it("counts sessions by the window holding their end, per window size", () => {
    const store = run([u1a, u1b, u2]);
    // Ends: u1a 21 s, u2 30 s, u1b 75 s.
    expect(values(store, 10_000)).toEqual({ 20_000: [1, 0, 1], 30_000: [1, 0, 1], 70_000: [1, 1, 1] });
    expect(values(store, 60_000)).toEqual({ 0: [2, 0, 2], 60_000: [1, 1, 1] });
  });

  it("applies retractions: a merge moves the session, it is never counted twice", () => {
    const store = run([u1a, u1b, u2, ...merge]);
    expect(values(store, 10_000)).toEqual({ 20_000: [0, 0, 0], 30_000: [1, 0, 1], 70_000: [1, 1, 1] });
    expect(values(store, 60_000)).toEqual({ 0: [1, 0, 1], 60_000: [1, 1, 1] });
    const merged = store
      .select({ policy: "alerting", windowMs: 60_000, metric: "sessions" })
      .find((s) => s.pane.window.start === 60_000)?.pane;
    expect(merged?.value.p50).toBeGreaterThan(54_000 * 0.98);
    expect(merged?.value.p50).toBeLessThan(54_000 * 1.02);
    expect(merged?.value.errorRate).toBe(1);
    // The derived pane carries the session pane's bias and emit delay (the policy's).
    expect(merged?.bias).toEqual(u1a.bias);
    expect(merged?.emitDelayMs).toBe(u1a.emitDelayMs);
    expect(merged?.id).toBe("alerting|sessions:api|60000|60000");
  });

  it("keeps derived panes apart from window panes and off the frontier", () => {
    const store = run([u1a, u2]);
    store.upsert(testPane({ policy: "alerting", windowMs: 10_000, start: 20_000, seq: 1 }), "{}");
    expect(store.select({ policy: "alerting", windowMs: 10_000 }).map((s) => s.pane.id)).toEqual([
      "alerting|api|10000|20000",
    ]);
    expect(
      store.select({ policy: "alerting", windowMs: 10_000, metric: "sessions" }).every((s) => s.pane.key.user === "*"),
    ).toBe(true);
    expect(store.newestPerPolicy().get("alerting")?.id).toBe("alerting|api|10000|20000");
  });

  it("holds one record per live session, not per pane", () => {
    const book = new SessionBook(720);
    for (const p of [u1a, u1b, u2, ...merge]) book.apply(p);
    expect(book.size).toBe(2);
  });

  it("adds up a discarding policy's deltas, and takes a retract's whole total out", () => {
    const book = new SessionBook(720, ["alerting"]);
    const store = new PaneStore(720);
    // The same session three times: 3 requests (1 error), then 2 more (no new error), then a merge retracts it.
    const first = session("u1", 1_000, 5_000, 1, "early", 3, 1);
    const more = session("u1", 1_000, 8_000, 2, "on-time", 2, 0);
    for (const p of [first, more]) for (const d of book.apply(p)) store.upsert(d, JSON.stringify(d));
    // One session of 5 requests that saw an error (read as full values, the last pane says none), ending at 28 s.
    expect(values(store, 10_000)).toEqual({ 20_000: [1, 1, 1] });
    for (const d of book.apply({ ...more, seq: 3, kind: "retract", value: { ...more.value, count: 5, errors: 1 } }))
      store.upsert(d, JSON.stringify(d));
    expect(values(store, 10_000)).toEqual({ 20_000: [0, 0, 0] });
    expect(book.size).toBe(0);
  });
});
