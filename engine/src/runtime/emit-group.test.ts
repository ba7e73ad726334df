import { describe, expect, it } from "vitest";
import { paneBatchLines, type LateRecord, type Pane } from "../protocol.js";
import { EmitGroup, MAX_BATCH_UNITS, type EmitGroupState, type GroupMessage } from "./emit-group.js";

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

/** A group of partition 3, message 1207, collecting what it sends. */
function group(wall: number, restored?: EmitGroupState): { g: EmitGroup; sent: GroupMessage[] } {
  const sent: GroupMessage[] = [];
  return {
    g: new EmitGroup(
      3,
      1207,
      (m) => sent.push(m),
      () => wall,
      restored,
    ),
    sent,
  };
}

const ids = (sent: GroupMessage[]): string[][] =>
  sent.map((m) => [
    m.msgId,
    ...paneBatchLines(m.body).map((l) => `${(JSON.parse(l) as Pane).id}#${(JSON.parse(l) as Pane).seq}`),
  ]);

describe("EmitGroup", () => {
  it("makes one message per subject, ids from the input message's place, panes as JSON lines in emission order", () => {
    const { g, sent } = group(1_040);
    g.pane(pane(0));
    g.pane(pane(1, { id: "dashboard|session:api/u1|60000|0", window: { start: 0, end: 69_000 }, session }));
    g.late(late);
    g.pane(pane(2));
    g.pane(pane(3, { window: { start: 0, end: 60_000 } }));
    g.late({ ...late, window: { start: 0, end: 60_000 } });
    expect(sent).toEqual([]);
    g.seal();
    expect(sent.map((m) => [m.subject, m.msgId, m.records])).toEqual([
      ["tm.panes.dashboard.10000", "3|1207|tm.panes.dashboard.10000|0", 2],
      ["tm.panes.dashboard.sessions", "3|1207|tm.panes.dashboard.sessions|0", 1],
      ["tm.late.dashboard", "3|1207|tm.late.dashboard|0", 2],
      ["tm.panes.dashboard.60000", "3|1207|tm.panes.dashboard.60000|0", 1],
    ]);
    const first = paneBatchLines(sent[0]?.body ?? "").map((l) => JSON.parse(l) as Pane);
    expect(first.map((p) => [p.seq, p.pipelineLagMs])).toEqual([
      [0, 40],
      [2, 40],
    ]);
    expect(paneBatchLines(sent[2]?.body ?? "").map((l) => JSON.parse(l) as LateRecord)).toEqual([
      late,
      { ...late, window: { start: 0, end: 60_000 } },
    ]);
    g.seal();
    expect(sent).toHaveLength(4);
  });

  const big = (seq: number): Pane => pane(seq, { key: { service: "api", route: "/r".repeat(2_000) } });

  it("sends each chunk once full, cut under the bound at the same panes whatever the wall clock says", () => {
    const cut = (wall: number): string[][] => {
      const { g, sent } = group(wall);
      for (let i = 0; i < 200; i++) g.pane(big(i));
      expect(sent.length).toBeGreaterThan(0);
      g.seal();
      for (const m of sent) expect(m.body.length).toBeLessThanOrEqual(MAX_BATCH_UNITS + 16 * m.records);
      return ids(sent);
    };
    const near = cut(1_001);
    expect(near.length).toBeGreaterThan(1);
    expect(near.map((c) => c[0])).toEqual(near.map((_, k) => `3|1207|tm.panes.dashboard.10000|${k}`));
    expect(cut(1_000 + 9_999_999_999)).toEqual(near);
    expect(near.flatMap((c) => c.slice(1))).toHaveLength(200);
  });

  it("a group carried in a checkpoint at any point and restored sends what the uninterrupted group sends", () => {
    const emit = (g: EmitGroup, i: number): void => (i % 7 === 3 ? g.late(late) : g.pane(big(i)));
    const whole = group(1_001);
    for (let i = 0; i < 120; i++) emit(whole.g, i);
    whole.g.seal();
    for (const at of [0, 1, 37, 64, 119]) {
      const first = group(1_001);
      for (let i = 0; i < at; i++) emit(first.g, i);
      const state = first.g.state();
      first.g.pane(big(999)); // after the checkpoint: not part of it
      const second = group(1_001, JSON.parse(JSON.stringify(state)) as EmitGroupState);
      for (let i = at; i < 120; i++) emit(second.g, i);
      second.g.seal();
      const sentBefore = first.sent.length;
      expect([...first.sent.slice(0, sentBefore), ...second.sent].map((m) => [m.msgId, m.body])).toEqual(
        whole.sent.map((m) => [m.msgId, m.body]),
      );
    }
  });
});
