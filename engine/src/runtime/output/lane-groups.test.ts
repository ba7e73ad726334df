import { describe, expect, it } from "vitest";
import type { LateRecord, Pane } from "../../protocol.js";
import type { EmitGroupState, GroupMessage } from "./emit-group.js";
import { LaneGroups } from "./lane-groups.js";

/** One step of a worker's life: an item of (lane, seq) emitting `out` panes/records, or a message done. */
type Step = { item: [lane: number, seq: number]; out: Array<"pane" | "late"> } | { done: [lane: number, seq: number] };

function pane(n: number): Pane {
  return {
    id: `dashboard|api|10000|${n}`,
    seq: n,
    kind: "early",
    policy: "dashboard",
    key: { service: "api", route: "/r".repeat(n % 5) },
    window: { start: 0, end: 10_000 },
    value: { count: n, errors: 0, errorRate: 0, p50: 1, p90: 1, p95: 1, p99: 1, p999: 1, users: 1 },
    watermark: 0,
    emittedAt: 1_000,
    emitDelayMs: 0,
    pipelineLagMs: 0,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
  };
}

function late(n: number): LateRecord {
  return {
    policy: n % 2 ? "dashboard" : "billing",
    reason: "behind-watermark",
    event: { ts: n, ingest_ts: n + 5, service: "api", route: "", status: 200, latency_ms: 1, user: "" },
    window: { start: 0, end: 10_000 },
    watermark: 20_000,
  };
}

/** Two lanes (partitions 2 and 6) whose messages interleave, each message's items split by the other's. */
const steps: Step[] = [
  { item: [0, 11], out: ["pane", "late"] },
  { item: [1, 12], out: ["late"] },
  { item: [0, 11], out: [] },
  { item: [1, 12], out: ["pane", "pane"] },
  { item: [0, 11], out: ["late", "late", "pane"] },
  { done: [0, 11] },
  { item: [0, 13], out: ["pane"] },
  { done: [0, 13] },
  { item: [1, 12], out: ["late"] },
  { done: [1, 12] },
  { item: [1, 14], out: [] },
  { done: [1, 14] },
];

/** Plays steps [from, to); the j-th output of step i is pane or record number 10 i + j. */
function play(g: LaneGroups, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const s = steps[i] as Step;
    if ("done" in s) g.done(...s.done);
    else {
      g.at(...s.item);
      s.out.forEach((o, j) => (o === "pane" ? g.pane(pane(10 * i + j)) : g.late(late(10 * i + j))));
    }
  }
}

function lanes(restored?: EmitGroupState[]): { g: LaneGroups; sent: GroupMessage[] } {
  const sent: GroupMessage[] = [];
  return {
    g: new LaneGroups(
      [2, 6],
      (m) => sent.push(m),
      () => 1_040,
      restored,
    ),
    sent,
  };
}

describe("LaneGroups", () => {
  it("sends one group per input message and subject when the message is done, ids from its partition and sequence", () => {
    const { g, sent } = lanes();
    play(g, 0, steps.length);
    expect(sent.map((m) => [m.msgId, m.records])).toEqual([
      ["2|11|tm.panes.dashboard.10000|b0", 2],
      ["2|11|tm.late.dashboard|b0", 2],
      ["2|11|tm.late.billing|b0", 1],
      ["2|13|tm.panes.dashboard.10000|b0", 1],
      ["6|12|tm.late.billing|b0", 2],
      ["6|12|tm.panes.dashboard.10000|b0", 2],
    ]);
    expect(g.pending()).toEqual([]);
  });

  it("stopped after any step, its pending groups restored, it sends exactly what the uninterrupted run sends", () => {
    const whole = lanes();
    play(whole.g, 0, steps.length);
    for (let k = 0; k <= steps.length; k++) {
      const first = lanes();
      play(first.g, 0, k);
      // Through JSON, as the checkpoint header stores it.
      const pending = JSON.parse(JSON.stringify(first.g.pending())) as EmitGroupState[];
      const second = lanes(pending);
      play(second.g, k, steps.length);
      const ids = (m: GroupMessage[]): string[] => m.map((x) => `${x.msgId} ${Buffer.from(x.body).toString("hex")}`);
      expect(ids([...first.sent, ...second.sent]), `stopped after step ${k}`).toEqual(ids(whole.sent));
    }
  });

  it("a message that never finishes goes out, as far as it got, when its lane's next message emits", () => {
    const { g, sent } = lanes();
    g.at(0, 11);
    g.pane(pane(1));
    g.at(0, 15);
    expect(sent).toEqual([]);
    g.late(late(2));
    expect(sent.map((m) => m.msgId)).toEqual(["2|11|tm.panes.dashboard.10000|b0"]);
    expect(g.pending().map((p) => [p.partition, p.seq])).toEqual([[2, 15]]);
  });
});
