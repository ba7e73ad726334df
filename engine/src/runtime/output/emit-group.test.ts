import { describe, expect, it } from "vitest";
import { paneBatchLines, type LateRecord, type Pane } from "../../protocol.js";
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

const text = (body: Uint8Array): string => new TextDecoder().decode(body);

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
      expect([...first.sent.slice(0, sentBefore), ...second.sent].map((m) => [m.msgId, text(m.body)])).toEqual(
        whole.sent.map((m) => [m.msgId, text(m.body)]),
      );
    }
  });

  it("sends the bytes and cuts the chunks the JSON.stringify path did (unicode keys and lines near the bound included)", () => {
    const records: Array<Pane | LateRecord> = [];
    for (let i = 0; i < 400; i++) {
      const service = ["api", "zahlung-ü", "服务", "🚀", 'q"\\'][i % 5] as string;
      const route = "/r".repeat((i * 37) % 900) + (i % 3 ? "" : "\u2028\ud800");
      records.push(i % 9 === 4 ? { ...late, event: { ...late.event, service } } : pane(i, { key: { service, route } }));
    }
    const { g, sent } = group(1_000 + 123_456_789);
    for (const r of records)
      if ("reason" in r) g.late(r);
      else g.pane(r);
    g.seal();
    // The path before JsonLines: per subject, JSON.stringify lines, cut before the line that passes the bound.
    const want: Array<[string, string]> = [];
    const open = new Map<string, { chunk: number; lines: string[]; units: number }>();
    const flush = (subject: string, c: { chunk: number; lines: string[]; units: number }): void => {
      want.push([`3|1207|${subject}|${c.chunk}`, c.lines.join("\n")]);
      c.chunk++;
      c.lines = [];
      c.units = 0;
    };
    for (const r of records) {
      const isPane = !("reason" in r);
      if (isPane) r.pipelineLagMs = 1_000 + 123_456_789 - r.emittedAt;
      const subject = isPane ? "tm.panes.dashboard.10000" : "tm.late.dashboard";
      const json = JSON.stringify(r);
      const units = json.length - (isPane ? String(r.pipelineLagMs).length : 0);
      let c = open.get(subject);
      if (!c) open.set(subject, (c = { chunk: 0, lines: [], units: 0 }));
      if (c.lines.length > 0 && c.units + units + 1 > MAX_BATCH_UNITS) flush(subject, c);
      c.lines.push(json);
      c.units += units + 1;
    }
    for (const [subject, c] of open) if (c.lines.length > 0) flush(subject, c);
    const got = sent.map((m) => [m.msgId, text(m.body)]);
    expect(got.length).toBeGreaterThan(2);
    expect(got.sort()).toEqual(want.sort());
    for (const m of sent) expect(Buffer.from(m.body).equals(Buffer.from(text(m.body), "utf8"))).toBe(true);
  });
});
