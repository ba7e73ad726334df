import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../protocol.js";
import { capture } from "./__fixtures__/capture.js";
import { createCore } from "./create-core.js";
import { OTHER_ROUTE, OTHER_SERVICE } from "./windows/key-registry.js";
import { simulate } from "./simulation.js";
import { validateCoreConfig } from "./validate-config.js";

const T0 = 1_767_225_600_000;
const ev = (ts: number, ingest: number, route = "/r", service = "a"): TelemetryEvent => ({
  ts,
  ingest_ts: ingest,
  service,
  route,
  status: 200,
  latency_ms: 12,
  user: "u1",
});

describe("late data: boundaries", () => {
  const config = validateCoreConfig({
    partitions: 1,
    windows: ["10s"],
    policies: [
      { name: "p", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "3s", lateEvery: "1s", mode: "accumulating" },
    ],
    referenceHorizon: "1m",
  });

  it("e > W on time; e <= W < e + G late and accepted; e + G <= W dropped — W includes the record's own ingest_ts", () => {
    const core = createCore(config);
    const out = capture();
    const end = T0 + 10_000;
    core.event(0, ev(T0 + 1, T0 + 100), out);
    core.event(0, ev(T0 + 2, end + 2000 - 1), out); // W = end − 1 < end: on time
    core.event(0, ev(T0 + 3, end + 2000), out); // W = end: late, accepted
    core.event(0, ev(T0 + 4, end + 2000 + 2999), out); // W = end + G − 1: late, accepted
    core.event(0, ev(T0 + 5, end + 2000 + 3000), out); // W = end + G: dropped
    const s = core.status().policies[0];
    // One window size: (event, window) pairs and events are the same counts here.
    expect([s?.lateAcceptedWindowEvents, s?.lateAcceptedEvents, s?.droppedWindowEvents, s?.droppedEvents]).toEqual([
      2, 2, 1, 1,
    ]);
    expect(out.dropped.map((d) => [d.event.ts, d.watermark, d.window])).toEqual([
      [T0 + 5, end + 3000, { start: T0, end }],
    ]);
    const svc = out.panes.filter((p) => p.key.route === undefined);
    expect(svc.map((p) => [p.kind, p.value.count])).toEqual([
      ["on-time", 2],
      ["late", 3],
      ["late", 4],
      ["final", 4],
    ]);
    expect(svc.at(-1)?.emittedAt).toBe(end + 5000);
    expect(svc.at(-1)?.lateAccepted).toBe(2);
  });

  it("a window whose first event is already late gets no on-time pane: late, then final, and no on-time delay", () => {
    const core = createCore(config);
    const out = capture();
    core.event(0, ev(T0 + 1, T0 + 100), out); // window [T0, T0 + 10 s): on time
    core.heartbeat(0, T0 + 12_000, out); // W = end: its on-time pane, 2 s after its end
    core.heartbeat(0, T0 + 15_000, out); // W = end + G: its final
    const end = T0 + 20_000;
    core.event(0, ev(T0 + 10_500, end + 2000 + 2900), out); // opens [10 s, 20 s) at W = end + 2.9 s: late
    core.event(0, ev(T0 + 11_000, end + 2000 + 2950), out); // late again; the late-pane rate limit holds it
    core.heartbeat(0, end + 2000 + 3000, out); // W = end + G: final
    const second = out.panes.filter((p) => p.key.route === undefined && p.window.end === end);
    expect(second.map((p) => [p.kind, p.value.count, p.emittedAt - end, p.lateAccepted])).toEqual([
      ["late", 1, 4900, 1],
      ["final", 2, 5000, 2],
    ]);
    const routes = out.panes.filter((p) => p.key.route !== undefined && p.window.end === end).map((p) => p.kind);
    expect(routes).toEqual(["late", "final"]);
    const s = core.status().policies[0];
    // Only the first window's on-time pane counts: the late window's 4.9 s would have inflated it.
    expect([s?.emitDelayMs, s?.lateAcceptedEvents, s?.droppedEvents]).toEqual([2000, 2, 0]);
  });

  it("counts dropped and late both ways: (event, window) pairs and events", () => {
    const core = createCore(
      validateCoreConfig({
        ...config,
        windows: ["10s", "60s", { kind: "sliding", size: "30s", slide: "10s" }],
        policies: [{ name: "p", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "15s", mode: "accumulating" }],
      }),
    );
    const out = capture();
    core.event(0, ev(T0 + 1, T0 + 100), out);
    // W = 64 s. ts 5 s: dropped from [0, 10 s) and the sliding [-20, 10), [-10, 20), [0, 30) (end + 15 s <= W),
    // late into [0, 60 s).
    core.event(0, ev(T0 + 5_000, T0 + 66_000), out);
    // W = 64.1 s. ts 45 s: late into [40 s, 50 s), [0, 60 s), the sliding [20, 50), [30, 60); on time in [40, 70).
    core.event(0, ev(T0 + 45_000, T0 + 66_100), out);
    const s = core.status().policies[0];
    expect([s?.droppedWindowEvents, s?.droppedEvents, s?.lateAcceptedWindowEvents, s?.lateAcceptedEvents]).toEqual([
      4, 1, 5, 2,
    ]);
    // One late record per (event, window) dropped from; panes carry the pair count.
    expect(out.dropped.length).toBe(4);
    core.finish(out);
    expect(out.panes.at(-1)?.dropped).toBe(4);
  });

  it("frees a window once the last policy and the reference closed it", () => {
    const core = createCore(config);
    const out = capture();
    core.event(0, ev(T0 + 1, T0 + 100), out);
    expect(core.status().openWindows).toBe(1);
    core.heartbeat(0, T0 + 10_000 + 59_999, out);
    expect(core.status().openWindows).toBe(1);
    core.heartbeat(0, T0 + 10_000 + 60_000, out);
    expect(core.status()).toMatchObject({ openWindows: 0, stateKeys: 0 });
    expect(core.status().policies[0]?.bias).toEqual({
      countPct: 0,
      errorRatePp: 0,
      p99Pct: 0,
      usersPct: 0,
      windows: 1,
      // one sample: no interval yet
      spread: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null },
      stage: "final",
      scope: "policy",
      provisional: false,
    });
  });

  it("caps routes per service into (other), counts the overflow, and forgets idle routes after the TTL", () => {
    const core = createCore(validateCoreConfig({ ...config, routeCapPerService: 2, keyTtlMs: 20_000 }));
    const out = capture();
    for (const [i, r] of ["/a", "/b", "/c", "/d"].entries()) core.event(0, ev(T0 + i, T0 + 100 + i, r), out);
    core.heartbeat(0, T0 + 200_000, out);
    const routes = out.panes
      .filter((p) => p.kind === "final" && p.key.route !== undefined)
      .map((p) => [p.key.route, p.value.count]);
    expect(routes).toEqual([
      ["/a", 1],
      ["/b", 1],
      [OTHER_ROUTE, 2],
    ]);
    expect(core.status().overflow).toEqual({ services: 0, routes: 2 });
    core.event(0, ev(T0 + 300_000, T0 + 300_100, "/e"), out); // /a and /b expired: /e gets a place
    core.heartbeat(0, T0 + 500_000, out);
    expect(out.panes.filter((p) => p.kind === "final" && p.key.route !== undefined).at(-1)?.key.route).toBe("/e");
  });

  it("caps services into (other): later services are still aggregated and counted; the TTL frees places", () => {
    const core = createCore(validateCoreConfig({ ...config, serviceCap: 2, routeCapPerService: 1, keyTtlMs: 20_000 }));
    const out = capture();
    const services = ["a", "b", "c", "d", "c"];
    for (const [i, svc] of services.entries()) core.event(0, ev(T0 + i, T0 + 100 + i, `/r${i % 2}`, svc), out);
    core.heartbeat(0, T0 + 200_000, out);
    const finals = out.panes.filter((p) => p.kind === "final");
    expect(finals.map((p) => [p.key.service, p.key.route, p.value.count])).toEqual([
      ["a", undefined, 1],
      ["a", "/r0", 1],
      ["b", undefined, 1],
      ["b", "/r1", 1],
      [OTHER_SERVICE, undefined, 3],
      [OTHER_SERVICE, "/r0", 2], // c and c: /r0 keeps its place under (other), d's /r1 folds
      [OTHER_SERVICE, OTHER_ROUTE, 1],
    ]);
    expect(core.status().overflow).toEqual({ services: 3, routes: 1 });
    core.event(0, ev(T0 + 300_000, T0 + 300_100, "/r", "e"), out); // a and b expired: e keeps its name
    core.heartbeat(0, T0 + 500_000, out);
    expect(out.panes.filter((p) => p.kind === "final").at(-1)?.key.service).toBe("e");
    expect(core.status().overflow).toEqual({ services: 3, routes: 1 });
  });

  it("state stays bounded under 20 000 distinct services: the first serviceCap keep their names", () => {
    const core = createCore(validateCoreConfig({ ...config, serviceCap: 50 }));
    const out = capture();
    for (let i = 0; i < 20_000; i++) core.event(0, ev(T0 + i, T0 + 100 + i, "/r", `svc-${i}`), out);
    const s = core.status();
    expect(s.overflow).toEqual({ services: 19_950, routes: 0 });
    // 20 s of event time: a handful of 10 s slices, each with at most 50 services + (other), one route each.
    expect(s.stateKeys).toBeLessThanOrEqual(3 * 51 * 2);
    core.finish(out);
    const finals = out.panes.filter((p) => p.kind === "final" && p.key.route === undefined);
    expect(finals.reduce((n, p) => n + p.value.count, 0)).toBe(20_000);
    expect(new Set(finals.map((p) => p.key.service)).size).toBe(51);
  });

  it("cost per event does not depend on policies: each policy's final equals the brute-force prefix of its window", () => {
    const events = simulate({ seed: 3, events: 4000, services: 3, corr: 0.2 });
    const lags = [1_000, 3_000, 7_000, 15_000, 40_000];
    const cfg = validateCoreConfig({
      partitions: 1,
      windows: ["30s"],
      policies: lags.map((lag, i) => ({
        name: `p${i}`,
        watermark: { kind: "arrival-lag", lag },
        grace: (i % 2) * 5000,
        mode: "final-only",
      })),
    });
    const core = createCore(cfg);
    const out = capture();
    for (const e of events) core.event(0, e, out);
    core.finish(out);
    lags.forEach((lag, i) => {
      const grace = (i % 2) * 5000;
      const finals = out.panes.filter((p) => p.policy === `p${i}` && p.key.route === undefined);
      for (const p of finals) {
        const kept = events.filter(
          (e) =>
            e.service === p.key.service &&
            e.ts >= p.window.start &&
            e.ts < p.window.end &&
            e.ingest_ts - lag < p.window.end + grace,
        );
        expect(p.value.count).toBe(kept.length);
      }
    });
  });
});

describe("input the core refuses", () => {
  it("throws a coded error, changing nothing, for a bad partition, a non-finite time or a negative latency", () => {
    const core = createCore(validateCoreConfig({ partitions: 2 }));
    const out = capture();
    const code = (f: () => void): string | undefined => {
      try {
        f();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return undefined;
    };
    expect(code(() => core.event(2, ev(T0, T0), out))).toBe("TM_CORE_BAD_PARTITION");
    expect(code(() => core.event(0, { ...ev(T0, T0), ts: Number.NaN }, out))).toBe("TM_CORE_BAD_EVENT");
    expect(code(() => core.event(0, { ...ev(T0, T0), latency_ms: -1 }, out))).toBe("TM_CORE_BAD_EVENT");
    expect(code(() => core.heartbeat(1, Number.POSITIVE_INFINITY, out))).toBe("TM_CORE_BAD_EVENT");
    expect(core.status()).toMatchObject({ logTime: null, eventsTotal: 0, openWindows: 0 });
  });
});
