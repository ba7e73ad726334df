import { describe, expect, it } from "vitest";
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import { testPane } from "../../protocol/pane.fixture.js";
import { metricDef } from "./metrics.js";
import { headlineWindow } from "./service-pool.js";
import { PaneBook } from "./pane-book.js";

const W = 10_000;
const p = (service: string, start: number, seq: number, kind: PaneKind, count: number, route?: string): Pane =>
  testPane({ service, start, seq, kind, count, route, windowMs: W });
const f = { policy: "dashboard", windowMs: W, services: [] as string[] };

describe("PaneBook (pane replacement in the browser)", () => {
  it("replaces an early value by the on-time and late panes of its window, never adding them up", () => {
    const book = new PaneBook();
    expect(book.cursor()).toBeUndefined();
    book.hello("e1");
    book.apply([{ rev: 1, pane: p("api", 0, 0, "early", 80) }]);
    book.apply([{ rev: 2, pane: p("api", 0, 1, "on-time", 100) }]);
    // A resumed or replayed older pane changes nothing.
    expect(book.apply([{ rev: 1, pane: p("api", 0, 0, "early", 80) }])).toBe(0);
    book.apply([{ rev: 3, pane: p("api", 0, 2, "late", 103) }]);
    const s = book.series(f, 0, 60_000).get("api") ?? [];
    expect(s.map((x) => [x.pane.kind, x.pane.value.count])).toEqual([["late", 103]]);
    expect(book.cursor()).toEqual({ epoch: "e1", rev: 3 });
    // A restarted server (new epoch): resume from nothing, it sends a full snapshot.
    book.hello("e2");
    expect(book.cursor()).toEqual({ epoch: "e2", rev: 0 });
  });

  it("groups service-level panes by service, skips routed panes, and finds the newest window", () => {
    const book = new PaneBook();
    book.apply(
      [
        p("web", W, 0, "early", 5),
        p("api", 0, 1, "on-time", 7),
        p("api", W, 0, "early", 9),
        p("api", W, 0, "early", 9, "/x"),
      ].map((pane, i) => ({ rev: i + 1, pane })),
    );
    const series = book.series(f, 0, 60_000);
    expect([...series.keys()]).toEqual(["api", "web"]);
    expect(headlineWindow(series)?.panes.map((x) => x.value.count)).toEqual([9, 5]);
    expect(book.series({ ...f, services: ["web"] }, 0, 60_000).size).toBe(1);
    book.reset([f]);
    expect(book.size).toBe(1);
    expect(book.prune(2 * W + 1)).toBe(1);
    expect(book.size).toBe(0);
  });

  it("keeps session panes (key.user) for the Sessions panel only; its details pool services", () => {
    const book = new PaneBook();
    const sessions = (
      service: string,
      count: number,
      errors: number,
      p50: number,
      p95: number,
      events: number,
    ): Pane => {
      const base = testPane({ service, count, errors, windowMs: W, seq: 1 });
      return {
        ...base,
        id: `dashboard|sessions:${service}|${W}|0`,
        key: { service, user: "*" },
        value: { ...base.value, p50, p95 },
        sessions: { events },
      };
    };
    book.apply(
      [
        p("api", 0, 0, "on-time", 7),
        sessions("api", 10, 1, 30_000, 90_000, 50),
        sessions("web", 30, 3, 20_000, 150_000, 130),
      ].map((pane, i) => ({ rev: i + 1, pane })),
    );
    expect([...book.series(f, 0, 60_000).values()].flat().map((x) => x.pane.id)).toEqual(["dashboard|api|10000|0"]);
    const s = book.series({ ...f, sessions: true }, 0, 60_000);
    expect([...s.keys()]).toEqual(["api", "web"]);
    const newest = headlineWindow(s)?.panes ?? [];
    const def = metricDef("sessions");
    expect(def.pool(newest)).toBe(40);
    // 4 of 40 sessions saw an error; durations: the largest over services.
    expect(def.details?.(newest).map((d) => d.text)).toEqual([
      "duration p50 30 s",
      "p95 2 m 30 s",
      "error sessions 10 %",
      "4.5 events/session",
    ]);
  });

  it('never lists, draws or pools the all-services ("*") panes as a service; allServices() holds them', () => {
    const book = new PaneBook();
    book.apply(
      [
        p("api", 0, 0, "on-time", 7),
        p("*", 0, 0, "on-time", 12),
        p("*", W, 0, "early", 3),
        p("web", 0, 0, "on-time", 5),
      ].map((pane, i) => ({ rev: i + 1, pane })),
    );
    expect(book.services()).toEqual(["api", "web"]);
    const series = book.series(f, 0, 60_000);
    expect([...series.keys()]).toEqual(["api", "web"]);
    expect(headlineWindow(series)?.panes.map((x) => x.key.service)).toEqual(["api", "web"]);
    expect(book.allServices(f, 0, 60_000).map((x) => [x.t, x.pane.value.count])).toEqual([
      [0, 12],
      [W, 3],
    ]);
    // Whatever the panel selects, and within its time range only; routed and other-policy panes are not among them.
    expect(book.allServices({ ...f, services: ["api"] }, 0, 60_000)).toHaveLength(2);
    expect(book.allServices(f, W + 1, 60_000).map((x) => x.t)).toEqual([W]);
    expect(book.allServices({ ...f, policy: "billing" }, 0, 60_000)).toEqual([]);
  });
});
