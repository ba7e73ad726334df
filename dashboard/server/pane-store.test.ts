import { describe, expect, it } from "vitest";
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import { testPane } from "../protocol/pane.fixture.js";
import { PaneStore } from "./pane-store.js";

const W = 10_000;
const p = (start: number, seq: number, kind: PaneKind, count: number, service = "api", policy = "dashboard"): Pane =>
  testPane({ start, seq, kind, count, service, policy, windowMs: W });
const put = (s: PaneStore, pane: Pane) => s.upsert(pane, JSON.stringify(pane));
const filter = { policy: "dashboard", windowMs: W };

describe("PaneStore", () => {
  it("replaces a pane by a later seq and ignores an older or repeated seq", () => {
    const s = new PaneStore(10);
    expect(put(s, p(0, 1, "early", 5))).toBeDefined();
    expect(put(s, p(0, 3, "on-time", 9))).toBeDefined();
    expect(put(s, p(0, 2, "early", 7))).toBeUndefined();
    expect(put(s, p(0, 3, "on-time", 9))).toBeUndefined();
    expect(s.get("dashboard|api|10000|0")?.pane.value.count).toBe(9);
    expect(s.select(filter).map((e) => e.pane.seq)).toEqual([3]);
    expect(s.rev).toBe(2);
  });

  it("keeps windows in start order, bounded per series, and selects by rev for resume", () => {
    const s = new PaneStore(3);
    for (const start of [20_000, 0, 10_000, 30_000]) put(s, p(start, 0, "on-time", start / 1000));
    expect(s.select(filter).map((e) => e.pane.window.start)).toEqual([10_000, 20_000, 30_000]);
    expect(s.get("dashboard|api|10000|0")).toBeUndefined();
    // A window older than everything kept in a full series is not stored.
    expect(put(s, p(0, 1, "late", 1))).toBeUndefined();
    const rev = s.rev;
    put(s, p(20_000, 1, "late", 21));
    put(s, p(0, 0, "on-time", 1, "web"));
    expect(s.select(filter, rev).map((e) => [e.pane.key.service, e.pane.window.start])).toEqual([
      ["api", 20_000],
      ["web", 0],
    ]);
    expect(s.select({ ...filter, services: ["web"] }).length).toBe(1);
    expect(s.select({ ...filter, from: 35_000 }).map((e) => e.pane.window.start)).toEqual([30_000]);
  });

  it("forgets the oldest windows across series once the total cap is passed", () => {
    const s = new PaneStore(100, 10);
    for (let i = 0; i < 6; i++) {
      put(s, p(i * W, 0, "on-time", 1, "api"));
      put(s, p(i * W, 0, "on-time", 1, "web"));
    }
    // 12 panes > 10: trimmed to 9, oldest windows first (ties at the cutoff start are kept).
    expect(s.size).toBe(10);
    expect(s.get(`dashboard|api|${W}|0`)).toBeUndefined();
    expect(s.get(`dashboard|web|${W}|${5 * W}`)).toBeDefined();
    expect(s.select(filter).every((e) => e.pane.window.start >= W)).toBe(true);
  });
});
