/**
 * The REST API as docs/websocket-protocol.md, "REST", states it: `/api/panes` returns the latest
 * pane per id, grouped by series, oldest window first, service-level unless `route` is given,
 * `service` a comma list, `from` / `to` (ms or ISO-8601) selecting windows that end at or after
 * `from` and start before `to`, a bad parameter a 400 naming it; `/api/policies` is the frontier,
 * from engine status when there is one (several workers merged) and else from the newest settled
 * pane. An in-process dashboard on a real nats-server; panes and status published as the engine does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBJECT_STATUS, type EngineStatusMessage, type Pane, type PaneBias } from "@tidemark/engine/protocol";
import { waitFor } from "../index.js";
import { pane, publishPanes, startRig, type DashboardRig, type PaneSpec } from "./fixtures.js";

const W = 60_000;
const T0 = Math.floor((Date.now() - 30 * 60_000) / W) * W;
const at = (i: number): number => T0 + i * W;

type Spec = Omit<PaneSpec, "policy" | "windowMs" | "seq" | "kind" | "count"> & Partial<PaneSpec>;
const p = (s: Spec): Pane => pane({ policy: "rest", windowMs: W, seq: 0, kind: "final", count: 1, ...s });

const PANES: Pane[] = [
  ...[0, 1, 2, 3, 4].map((i) => p({ service: "checkout", start: at(i), count: 10 + i })),
  ...[0, 1, 2].map((i) => p({ service: "search", start: at(i), count: 20 + i })),
  ...[0, 1].map((i) => p({ service: "checkout", route: "/cart", start: at(i), count: 30 + i })),
  p({ service: "checkout", route: "/pay", start: at(0), count: 40 }),
  p({ service: "checkout", start: at(0), windowMs: 10_000, count: 50 }),
  p({ policy: "other", service: "checkout", start: at(0), count: 60 }),
  // A newer version of one id: the latest is what the API answers.
  p({ service: "search", start: at(1), seq: 1, count: 99 }),
];

/** What a query answers, as [service, route, start, count]. */
type Row = [string, string | undefined, number, number];

describe("dashboard REST API", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startRig({}, { stream: true });
    await publishPanes(rig.nc, PANES.slice(0, -1));
    await publishPanes(rig.nc, PANES.slice(-1));
    await waitFor(async () => (await rows("")).some((r) => r[3] === 99), 30_000, "the panes stored");
  });
  afterAll(() => rig?.stop());

  async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${rig.dash.url}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function rows(query: string): Promise<Row[]> {
    const { status, body } = await get(`/api/panes?policy=rest&window=60s${query}`);
    expect(status, query).toBe(200);
    return (body.panes as Pane[]).map((x) => [x.key.service, x.key.route, x.window.start, x.value.count]);
  }

  /** Rows grouped by (service, route) in the order the API answered, each group's starts in order. */
  function grouped(rs: Row[]): Map<string, number[]> {
    const out = new Map<string, number[]>();
    let last = "";
    for (const [service, route, start] of rs) {
      const key = `${service}${route === undefined ? "" : ` ${route}`}`;
      if (key !== last && out.has(key)) throw new Error(`series ${key} is not contiguous: ${JSON.stringify(rs)}`);
      last = key;
      out.set(key, [...(out.get(key) ?? []), start]);
    }
    return out;
  }

  it("answers the latest pane per id, grouped by series, oldest window first, service level without route", async () => {
    const rs = await rows("");
    expect(grouped(rs)).toEqual(
      new Map([
        ["checkout", [0, 1, 2, 3, 4].map(at)],
        ["search", [0, 1, 2].map(at)],
      ]),
    );
    expect(rs.filter((r) => r[0] === "search").map((r) => r[3])).toEqual([20, 99, 22]);
    // window=1m is the same duration as 60s; 10s selects the other series.
    expect(((await get("/api/panes?policy=rest&window=1m")).body.panes as Pane[]).length).toBe(rs.length);
    const ten = (await get("/api/panes?policy=rest&window=10s")).body.panes as Pane[];
    expect(ten.map((x) => x.value.count)).toEqual([50]);
  });

  it("filters by service (a comma list) and by route", async () => {
    expect([...grouped(await rows("&service=search")).keys()]).toEqual(["search"]);
    expect([...grouped(await rows("&service=search,checkout")).keys()].sort()).toEqual(["checkout", "search"]);
    expect(await rows("&service=nosuch")).toEqual([]);
    expect(await rows("&route=/cart")).toEqual([
      ["checkout", "/cart", at(0), 30],
      ["checkout", "/cart", at(1), 31],
    ]);
    expect(await rows("&route=/pay&service=checkout")).toEqual([["checkout", "/pay", at(0), 40]]);
    expect(await rows("&route=/cart&service=search")).toEqual([]);
  });

  it("selects windows that end at or after from and start before to, in ms or ISO-8601", async () => {
    const checkout = async (q: string): Promise<number[]> => (await rows(`&service=checkout${q}`)).map((r) => r[2]);
    // [at(1), at(2)) ends exactly at from: in; [at(4), at(5)) starts exactly at to: out.
    expect(await checkout(`&from=${at(2)}&to=${at(4)}`)).toEqual([1, 2, 3].map(at));
    const iso = (ms: number): string => new Date(ms).toISOString();
    expect(await checkout(`&from=${iso(at(2))}&to=${iso(at(4))}`)).toEqual([1, 2, 3].map(at));
    expect(await checkout(`&from=${at(2) + 1}`)).toEqual([2, 3, 4].map(at));
    expect(await checkout(`&to=${at(1) + 1}`)).toEqual([0, 1].map(at));
    expect(await checkout(`&from=${at(5) + 1}`)).toEqual([]);
  });

  it("answers a missing or bad parameter with 400 TM_DASHBOARD_QUERY_INVALID naming it", async () => {
    const cases: Array<[string, string]> = [
      ["/api/panes?window=60s", "policy"],
      ["/api/panes?policy=rest", "window"],
      ["/api/panes?policy=rest&window=soon", "window"],
      ["/api/panes?policy=rest&window=0s", "window"],
      ["/api/panes?policy=rest&window=60s&from=yesterday", "from"],
      ["/api/panes?policy=rest&window=60s&to=12:00", "to"],
    ];
    for (const [path, field] of cases) {
      const { status, body } = await get(path);
      expect([status, body.code], path).toEqual([400, "TM_DASHBOARD_QUERY_INVALID"]);
      expect(body.error, path).toContain(`"${field}"`);
    }
  });

  it("answers /api/policies from the newest settled pane while no engine reports, then from engine status", async () => {
    const bias = (countPct: number, windows: number): PaneBias => ({
      countPct,
      errorRatePp: -countPct / 10,
      p99Pct: null,
      usersPct: countPct / 2,
      windows,
    });
    // Newest settled pane of "fallback": the on-time one at at(3), not the later early one.
    await publishPanes(rig.nc, [
      pane({ policy: "fallback", service: "a", windowMs: W, start: at(2), seq: 0, kind: "final", count: 1 }),
      pane({
        policy: "fallback",
        service: "a",
        windowMs: W,
        start: at(3),
        seq: 0,
        kind: "on-time",
        count: 1,
        emitDelayMs: 4321,
        pipelineLagMs: 77,
        bias: bias(3, 12),
      }),
      pane({ policy: "fallback", service: "a", windowMs: W, start: at(4), seq: 0, kind: "early", count: 1 }),
    ]);
    const policies = async (): Promise<Array<Record<string, unknown>>> =>
      (await get("/api/policies")).body.policies as Array<Record<string, unknown>>;
    await waitFor(async () => (await policies()).some((x) => x.name === "fallback"), 30_000, "the fallback policy");
    expect((await policies()).find((x) => x.name === "fallback")).toEqual({
      name: "fallback",
      label: "fallback",
      strategy: "",
      graceMs: null,
      bias: bias(3, 12),
      emitDelayMs: 4321,
      pipelineLagMs: 77,
      source: "panes",
      // No engine reports sizes, stages or services yet (docs/websocket-protocol.md, REST).
      windowMs: null,
      services: [],
      stages: [],
    });

    // Workers report "fallback": status wins; the largest emit delay and lag, bias weighted by windows.
    const report = (worker: string, emitDelayMs: number, lag: number, b: PaneBias): void =>
      rig.nc.publish(SUBJECT_STATUS, JSON.stringify(status(worker, emitDelayMs, lag, b)));
    // The maxima sit with the middle worker, so neither "first wins" nor "last wins" would pass;
    // the third has measured nothing yet (windows 0), which must not dilute the mean.
    const none: PaneBias = { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 };
    const tick = setInterval(() => {
      report("engine-0-2", 1900, 40, bias(4, 10));
      report("engine-3-5", 2100, 90, bias(1, 30));
      report("engine-6-7", 2000, 60, none);
    }, 200);
    try {
      await waitFor(
        async () => (await policies()).find((x) => x.name === "fallback")?.source === "status",
        30_000,
        "the status of the workers",
      );
      await waitFor(async () => (await workers()) === 3, 30_000, "three workers");
      expect((await policies()).find((x) => x.name === "fallback")).toEqual({
        name: "fallback",
        label: "fallback: from status",
        strategy: "arrival-lag 2s",
        graceMs: 0,
        bias: {
          countPct: expect.closeTo(1.75, 9),
          errorRatePp: expect.closeTo(-0.175, 9),
          p99Pct: null,
          usersPct: expect.closeTo(0.875, 9),
          windows: 30,
        },
        emitDelayMs: 2100,
        pipelineLagMs: 90,
        source: "status",
        // These workers report no stages or services (older engines): none are invented.
        windowMs: null,
        services: [],
        stages: [],
      });
    } finally {
      clearInterval(tick);
    }
  });

  async function workers(): Promise<number> {
    return ((await get("/api/status")).body.workers as unknown[]).length;
  }
});

function status(worker: string, emitDelayMs: number, pipelineLagMs: number, bias: PaneBias): EngineStatusMessage {
  const now = Date.now();
  return {
    worker,
    wallTime: now,
    logTime: now - pipelineLagMs,
    pipelineLagMs,
    partitions: [],
    heldBackBy: null,
    policies: [
      {
        name: "fallback",
        label: "fallback: from status",
        strategy: "arrival-lag 2s",
        graceMs: 0,
        mode: "accumulating",
        watermark: now - 2000,
        lateAccepted: 0,
        dropped: 0,
        bias,
        emitDelayMs,
      },
    ],
    openWindows: 0,
    stateKeys: 0,
    stateBytes: 0,
    checkpointAgeMs: null,
    eventsTotal: 0,
  };
}
