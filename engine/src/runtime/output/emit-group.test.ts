import { describe, expect, it } from "vitest";
import { readPaneRecords, type LateRecord, type Pane } from "../../protocol.js";
import { numberBytes } from "../../protocol/pane-encoding.js";
import { PaneRecords } from "../../protocol/pane-records.js";
import { EmitGroup, MAX_BATCH_UNITS, MIN_MAX_PAYLOAD, type EmitGroupState, type GroupMessage } from "./emit-group.js";

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

const sessions = { events: 42 };

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

const text = (body: Uint8Array): string => Buffer.from(body).toString("hex");

/** The JSON of each record of a body. */
const paneBatchLines = (body: Uint8Array | undefined): string[] =>
  readPaneRecords(body ?? new Uint8Array(0)).map((r) => JSON.stringify(r));

const ids = (sent: GroupMessage[]): string[][] =>
  sent.map((m) => [
    m.msgId,
    ...paneBatchLines(m.body).map((l) => `${(JSON.parse(l) as Pane).id}#${(JSON.parse(l) as Pane).seq}`),
  ]);

describe("EmitGroup", () => {
  it("makes one message per subject, ids from the input message's place, panes as JSON lines in emission order", () => {
    const { g, sent } = group(1_040);
    g.pane(pane(0));
    g.pane(pane(1, { id: "dashboard|sessions:api|60000|0", window: { start: 0, end: 60_000 }, sessions }));
    g.late(late);
    g.pane(pane(2));
    g.pane(pane(3, { window: { start: 0, end: 60_000 } }));
    g.late({ ...late, window: { start: 0, end: 60_000 } });
    expect(sent).toEqual([]);
    g.seal();
    expect(sent.map((m) => [m.subject, m.msgId, m.records])).toEqual([
      ["tm.panes.dashboard.10000", "3|1207|tm.panes.dashboard.10000|b0", 2],
      ["tm.panes.dashboard.sessions", "3|1207|tm.panes.dashboard.sessions|b0", 1],
      ["tm.late.dashboard", "3|1207|tm.late.dashboard|b0", 2],
      ["tm.panes.dashboard.60000", "3|1207|tm.panes.dashboard.60000|b0", 1],
    ]);
    const first = paneBatchLines(sent[0]?.body).map((l) => JSON.parse(l) as Pane);
    expect(first.map((p) => [p.seq, p.pipelineLagMs])).toEqual([
      [0, 40],
      [2, 40],
    ]);
    expect(paneBatchLines(sent[2]?.body).map((l) => JSON.parse(l) as LateRecord)).toEqual([
      late,
      { ...late, window: { start: 0, end: 60_000 } },
    ]);
    g.seal();
    expect(sent).toHaveLength(4);
  });

  it("keeps the subjects of policies apart: each policy's panes, session panes and late records on its own", () => {
    const { g, sent } = group(1_000);
    for (const policy of ["dashboard", "alerting", "dashboard"]) {
      g.pane(pane(0, { policy }));
      g.pane(pane(1, { policy, sessions }));
      g.late({ ...late, policy });
    }
    g.seal();
    expect(sent.map((m) => [m.subject, m.records])).toEqual([
      ["tm.panes.dashboard.10000", 2],
      ["tm.panes.dashboard.sessions", 2],
      ["tm.late.dashboard", 2],
      ["tm.panes.alerting.10000", 1],
      ["tm.panes.alerting.sessions", 1],
      ["tm.late.alerting", 1],
    ]);
  });

  const big = (seq: number): Pane => pane(seq, { key: { service: "api", route: "/r".repeat(2_000) + String(seq) } });

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
    expect(near.map((c) => c[0])).toEqual(near.map((_, k) => `3|1207|tm.panes.dashboard.10000|b${k}`));
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
      expect([...first.sent.slice(0, sentBefore), ...second.sent].map((m) => [m.msgId, text(m.body)])).toEqual(
        whole.sent.map((m) => [m.msgId, text(m.body)]),
      );
    }
  });

  it("sends each record's JSON through the binary encoding and cuts a chunk only when the next record passes the bound", () => {
    const records: Array<Pane | LateRecord> = [];
    for (let i = 0; i < 400; i++) {
      const service = ["api", "zahlung-ü", "服务", "🚀", 'q"\\'][i % 5] as string;
      const route = "/r".repeat((i * 37) % 900) + (i % 3 ? "" : "\u2028\ud800") + String(i);
      records.push(i % 9 === 4 ? { ...late, event: { ...late.event, service } } : pane(i, { key: { service, route } }));
    }
    const wall = 1_000 + 123_456_789;
    const { g, sent } = group(wall);
    for (const r of records)
      if ("reason" in r) g.late(r);
      else g.pane(r);
    g.seal();
    const isPane = (r: Pane | LateRecord): r is Pane => !("reason" in r);
    for (const r of records) if (isPane(r)) r.pipelineLagMs = wall - r.emittedAt;
    /** The bound's count of records written into one body: bytes without the header and the wall-clock field, plus one each. */
    const count = (rs: Array<Pane | LateRecord>): number => {
      const w = new PaneRecords();
      let n = 0;
      for (const r of rs) n += w.add(r) - (isPane(r) ? numberBytes(r.pipelineLagMs) : 0) + 1;
      return n;
    };
    expect(sent.length).toBeGreaterThan(2);
    for (const subject of ["tm.panes.dashboard.10000", "tm.late.dashboard"]) {
      const want = records.filter((r) => (subject.includes("late") ? !isPane(r) : isPane(r)));
      const mine = sent.filter((m) => m.subject === subject);
      expect(mine.map((m) => m.msgId)).toEqual(mine.map((_, k) => `3|1207|${subject}|b${k}`));
      expect(mine.flatMap((m) => paneBatchLines(m.body))).toEqual(want.map((r) => JSON.stringify(r)));
      let at = 0;
      for (const m of mine) {
        const chunk = want.slice(at, at + m.records);
        at += m.records;
        if (chunk.length > 1) expect(count(chunk)).toBeLessThanOrEqual(MAX_BATCH_UNITS);
        if (at < want.length) expect(count([...chunk, want[at] as Pane | LateRecord])).toBeGreaterThan(MAX_BATCH_UNITS);
        expect(m.body.length).toBeLessThan(MIN_MAX_PAYLOAD - 4096);
      }
      expect(at).toBe(want.length);
    }
  });
});
