import { describe, expect, it } from "vitest";
import { paneBatchLines, type LateRecord, type Pane } from "../protocol.js";
import { EmitGroup, MAX_BATCH_UNITS } from "./emit-group.js";

function pane(seq: number, over: Partial<Pane> = {}): Pane {
  return {
    id: `dashboard|api|10000|${1000 * seq}`,
    seq,
    kind: "early",
    policy: "dashboard",
    key: { service: "api" },
    window: { start: 0, end: 10_000 },
    value: { count: seq, errors: 0, errorRate: 0, p50: 1, p90: 1, p95: 1, p99: 1, p999: 1, users: 1 },
    watermark: 0,
    emittedAt: 1_000,
    emitDelayMs: 0,
    pipelineLagMs: 0,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
    ...over,
  };
}

const late: LateRecord = {
  policy: "dashboard",
  reason: "behind-watermark",
  event: { ts: 1, ingest_ts: 2, service: "api", route: "", status: 200, latency_ms: 1, user: "" },
  window: { start: 0, end: 10_000 },
  watermark: 20_000,
};

const session = { durationMs: 9_000, firstRoute: "/a", lastRoute: "/b" };

describe("EmitGroup", () => {
  it("makes one message per subject, ids from the item's place, panes as JSON lines in emission order", () => {
    const g = new EmitGroup(() => 1_040);
    expect(g.empty).toBe(true);
    g.pane(pane(0));
    g.pane(pane(1, { id: "dashboard|session:api/u1|60000|0", window: { start: 0, end: 69_000 }, session }));
    g.late(late);
    g.pane(pane(2));
    g.pane(pane(3, { window: { start: 0, end: 60_000 } }));
    g.late({ ...late, window: { start: 0, end: 60_000 } });
    const out = g.seal({ partition: 3, seq: 1207, index: 41 });
    expect(out.map((m) => [m.subject, m.msgId, m.records])).toEqual([
      ["tm.panes.dashboard.10000", "3|1207|41|tm.panes.dashboard.10000|0", 2],
      ["tm.panes.dashboard.sessions", "3|1207|41|tm.panes.dashboard.sessions|0", 1],
      ["tm.late.dashboard", "3|1207|41|tm.late.dashboard|0", 2],
      ["tm.panes.dashboard.60000", "3|1207|41|tm.panes.dashboard.60000|0", 1],
    ]);
    const first = paneBatchLines(out[0]?.body ?? "").map((l) => JSON.parse(l) as Pane);
    expect(first.map((p) => [p.seq, p.pipelineLagMs])).toEqual([
      [0, 40],
      [2, 40],
    ]);
    expect(paneBatchLines(out[2]?.body ?? "").map((l) => JSON.parse(l) as LateRecord)).toEqual([
      late,
      { ...late, window: { start: 0, end: 60_000 } },
    ]);
    expect(g.empty).toBe(true);
    expect(g.seal({ partition: 3, seq: 1208, index: 0 })).toEqual([]);
  });

  it("cuts chunks under the bound at the same panes whatever the wall clock says", () => {
    const big = (seq: number): Pane => pane(seq, { key: { service: "api", route: "/r".repeat(2_000) } });
    const cut = (wall: number): string[][] => {
      const g = new EmitGroup(() => wall);
      for (let i = 0; i < 200; i++) g.pane(big(i));
      return g.seal({ partition: 0, seq: 9, index: 2 }).map((m) => {
        expect(m.body.length).toBeLessThanOrEqual(MAX_BATCH_UNITS + 16 * m.records);
        return [
          m.msgId,
          ...paneBatchLines(m.body).map((l) => (JSON.parse(l) as Pane).id + "#" + (JSON.parse(l) as Pane).seq),
        ];
      });
    };
    const near = cut(1_001);
    expect(near.length).toBeGreaterThan(1);
    expect(near.map((c) => c[0])).toEqual(near.map((_, k) => `0|9|2|tm.panes.dashboard.10000|${k}`));
    expect(cut(1_000 + 9_999_999_999)).toEqual(near);
    expect(near.flatMap((c) => c.slice(1))).toHaveLength(200);
  });
});
