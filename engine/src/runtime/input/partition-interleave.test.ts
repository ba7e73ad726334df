import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decodeCompactRows, encodeCompactEventBatch, type TelemetryEvent } from "../../protocol.js";
import { PartitionInterleave, type LaneOffset, type InterleaveSink } from "./partition-interleave.js";

interface Msg {
  lane: number;
  seq: number;
  events: TelemetryEvent[] | null;
  hb: number;
}

function ev(ingest: number, tag: string): TelemetryEvent {
  return { ts: ingest - 5, ingest_ts: ingest, service: tag, route: "/", status: 200, latency_ms: 1, user: "" };
}

/**
 * Records every release as a line: "e lane seq idx key service" or "h lane key"; and in `log`,
 * those with "d lane seq" when a message is done, [lane, seq] for each item.
 */
function recorder(): InterleaveSink & { lines: string[]; log: Array<[string, number, number]> } {
  const lines: string[] = [];
  const log: Array<[string, number, number]> = [];
  return {
    lines,
    log,
    event: (lane, e, seq, idx) => {
      lines.push(`e ${lane} ${seq} ${idx} ${e.ingest_ts} ${e.service}`);
      log.push(["item", lane, seq]);
    },
    heartbeat: (lane, ts, seq) => {
      lines.push(`h ${lane} ${ts}`);
      log.push(["item", lane, seq]);
    },
    done: (lane, seq) => void log.push(["done", lane, seq]),
  };
}

/** Each message is done once, right after its last item, and only once all of its items are out. */
function expectDoneAfterLastItem(out: ReturnType<typeof recorder>, msgs: readonly Msg[]): void {
  const items = new Map<string, number>();
  for (const m of msgs) items.set(`${m.lane} ${m.seq}`, m.events?.length ?? 1);
  const seen = new Map<string, number>();
  const done = new Set<string>();
  for (const [what, lane, seq] of out.log) {
    const k = `${lane} ${seq}`;
    if (what === "item") {
      expect(done.has(k), `item of ${k} after its done`).toBe(false);
      seen.set(k, (seen.get(k) ?? 0) + 1);
    } else {
      expect(done.has(k), `${k} done twice`).toBe(false);
      expect(seen.get(k), `${k} done with items left`).toBe(items.get(k));
      done.add(k);
    }
  }
  for (const [k, n] of seen) if (n === items.get(k)) expect(done.has(k), `${k} released whole, never done`).toBe(true);
}

/**
 * Random per-lane logs: batches of events and heartbeats, one stream (sequences interleave
 * across lanes). A lane's ingest_ts mostly rises but may step back (several ingest instances, or
 * one behind), and some lanes may get no message at all.
 */
const logsArb = fc
  .tuple(
    fc.integer({ min: 1, max: 4 }),
    fc.array(
      fc.record({
        lane: fc.nat(3),
        hb: fc.boolean(),
        n: fc.integer({ min: 1, max: 4 }),
        dt: fc.integer({ min: -2, max: 3 }),
      }),
      { maxLength: 40 },
    ),
  )
  .map(([lanes, specs]) => {
    const clock = Array.from({ length: lanes }, () => 1000);
    const msgs: Msg[] = [];
    specs.forEach((s, i) => {
      const lane = s.lane % lanes;
      const seq = i + 1;
      const t = (clock[lane] ?? 0) + s.dt;
      clock[lane] = t;
      if (s.hb) msgs.push({ lane, seq, events: null, hb: t });
      else
        msgs.push({ lane, seq, events: Array.from({ length: s.n }, (_, k) => ev(t + (k % 2), `s${seq}.${k}`)), hb: 0 });
    });
    return { lanes, msgs };
  });

/** Every other batch as compact rows, made objects as they are released (a worker's source gives them so). */
function feed(interleave: PartitionInterleave, m: Msg): void {
  const rows = m.events !== null && m.seq % 2 === 0 ? decodeCompactRows(encodeCompactEventBatch(m.events)) : m.events;
  interleave.push(m.lane, m.seq, rows, m.hb);
}

interface Item {
  lane: number;
  seq: number;
  index: number;
  ts: number;
  /** Largest ingest_ts of the lane up to and including this item. */
  laneMax: number;
  line: (key: number) => string;
}

/**
 * The oracle, written from the documented order alone (docs/decisions/0006-engine-runtime.md,
 * "The merge is a total order") and sharing no code with PartitionInterleave. With every lane's log
 * known, the order is a plain sort of all items by (the lane's largest ingest_ts up to the item,
 * lane, seq, index): releasing in (key, lane) order with key = max(ingest_ts, log time) comes
 * to exactly that, and each item's key is that prefix maximum. What an interleave may release of it
 * once everything has arrived is the longest prefix in which no lane with nothing left (or
 * nothing at all) could still send an item before the next one: such a lane bounds the release
 * by (max(its largest ingest_ts shown, log time), lane). Returns the lines and the lane the
 * interleave then waits for.
 */
function oracle(lanes: number, msgs: readonly Msg[]): { lines: string[]; waitingFor: number | null } {
  const items: Item[] = [];
  const laneMax = Array.from({ length: lanes }, () => -Infinity);
  for (const m of msgs) {
    const batch = m.events ?? [null];
    batch.forEach((e, index) => {
      const ts = e === null ? m.hb : e.ingest_ts;
      laneMax[m.lane] = Math.max(laneMax[m.lane] as number, ts);
      items.push({
        lane: m.lane,
        seq: m.seq,
        index,
        ts,
        laneMax: laneMax[m.lane] as number,
        line: (key) => (e === null ? `h ${m.lane} ${key}` : `e ${m.lane} ${m.seq} ${index} ${key} ${e.service}`),
      });
    });
  }
  const sorted = [...items].sort(
    (a, b) => a.laneMax - b.laneMax || a.lane - b.lane || a.seq - b.seq || a.index - b.index,
  );
  const left = Array.from({ length: lanes }, (_, l) => items.filter((i) => i.lane === l).length);
  const shown = Array.from({ length: lanes }, () => -Infinity);
  const lines: string[] = [];
  let time = -Infinity;
  for (const item of sorted) {
    let blocker: { key: number; lane: number } | null = null;
    for (let l = 0; l < lanes; l++) {
      if (l === item.lane || (left[l] as number) > 0) continue;
      const key = Math.max(shown[l] as number, time);
      if (blocker === null || key < blocker.key || (key === blocker.key && l < blocker.lane))
        blocker = { key, lane: l };
    }
    if (blocker && (item.laneMax > blocker.key || (item.laneMax === blocker.key && item.lane > blocker.lane)))
      return { lines, waitingFor: blocker.lane };
    lines.push(item.line(item.laneMax));
    time = item.laneMax;
    shown[item.lane] = Math.max(shown[item.lane] as number, item.ts);
    left[item.lane] = (left[item.lane] as number) - 1;
  }
  return { lines, waitingFor: null };
}

describe("PartitionInterleave", () => {
  it("releases what the sorted oracle releases, whatever the arrival interleaving and drain points", () => {
    fc.assert(
      fc.property(logsArb, fc.array(fc.nat(), { maxLength: 80 }), ({ lanes, msgs }, picks) => {
        const want = oracle(lanes, msgs);
        const interleave = new PartitionInterleave(lanes);
        const out = recorder();
        const perLane = Array.from({ length: lanes }, (_, l) => msgs.filter((m) => m.lane === l));
        let p = 0;
        while (perLane.some((q) => q.length > 0)) {
          const pick = picks[p++ % Math.max(1, picks.length)] ?? 0;
          const open = perLane.filter((q) => q.length > 0);
          const q = open[pick % open.length] as Msg[];
          feed(interleave, q.shift() as Msg);
          if (pick % 3 === 0) {
            interleave.drain(out, 1 + (pick % 5));
            expect(want.lines.slice(0, out.lines.length)).toEqual(out.lines);
          }
        }
        interleave.drain(out);
        expect(out.lines).toEqual(want.lines);
        expect(interleave.waitingFor()).toBe(want.waitingFor);
        expectDoneAfterLastItem(out, msgs);
      }),
      { numRuns: 500 },
    );
  });

  it("restoring from offsets taken at any point and redelivering continues the oracle's sequence", () => {
    fc.assert(
      fc.property(logsArb, fc.nat(), fc.nat(), ({ lanes, msgs }, cut, budget) => {
        const want = oracle(lanes, msgs);

        const first = new PartitionInterleave(lanes);
        const out = recorder();
        const delivered = msgs.slice(0, cut % (msgs.length + 1));
        for (const m of delivered) feed(first, m);
        first.drain(out, budget % 7 === 0 ? Infinity : budget % 7);
        const offsets: LaneOffset[] = first.offsets();

        // A restarted engine: consumers resume at lastSeq + 1 and see every later message again.
        const second = new PartitionInterleave(lanes, offsets);
        for (const m of msgs) if (m.seq > (offsets[m.lane] as LaneOffset).lastSeq) feed(second, m);
        second.drain(out);
        expect(out.lines).toEqual(want.lines);
      }),
      { numRuns: 300 },
    );
  });

  it("gives back the offsets it was restored from until a message comes, a message handled in part included", () => {
    fc.assert(
      fc.property(logsArb, fc.nat(), fc.nat(), ({ lanes, msgs }, cut, budget) => {
        const want = oracle(lanes, msgs);
        const first = new PartitionInterleave(lanes);
        const out = recorder();
        for (const m of msgs.slice(0, cut % (msgs.length + 1))) feed(first, m);
        first.drain(out, budget % 7 === 0 ? Infinity : budget % 7);
        const offsets = first.offsets();

        // Restored, then stopped at once: its checkpoint is the one it restored from.
        const idle = new PartitionInterleave(lanes, offsets);
        expect(idle.offsets()).toEqual(offsets);
        const third = new PartitionInterleave(lanes, idle.offsets());
        for (const m of msgs) if (m.seq > (offsets[m.lane] as LaneOffset).lastSeq) feed(third, m);
        third.drain(out);
        expect(out.lines).toEqual(want.lines);
      }),
      { numRuns: 300 },
    );
  });

  it("a lane that has sent nothing, not even a heartbeat, holds every other lane back and is named", () => {
    const interleave = new PartitionInterleave(3);
    const out = recorder();
    interleave.push(0, 1, [ev(1000, "a")]);
    interleave.push(0, 2, [ev(2000, "b")]);
    interleave.push(2, 3, null, 2500);
    expect(interleave.drain(out)).toBe(0);
    expect(interleave.waitingFor()).toBe(1);

    interleave.push(1, 4, null, 1500);
    interleave.drain(out);
    expect(out.lines).toEqual(["e 0 1 0 1000 a", "h 1 1500"]);
    // Lane 1 showed 1500 and may send more from then on: lane 0's event at 2000 still waits.
    expect(interleave.waitingFor()).toBe(1);

    // Now lane 0, which has nothing left and showed 2000, holds lane 2's heartbeat at 2500.
    interleave.push(1, 5, null, 3000);
    interleave.drain(out);
    expect(out.lines.slice(2)).toEqual(["e 0 2 0 2000 b"]);
    expect(interleave.waitingFor()).toBe(0);

    // Every lane bounds the others: with lane 2 now drained at 2500, the heartbeats at 3000 wait.
    interleave.push(0, 6, null, 3000);
    interleave.drain(out);
    expect(out.lines.slice(3)).toEqual(["h 2 2500"]);
    expect(interleave.logTime).toBe(2500);
    expect(interleave.waitingFor()).toBe(2);
    interleave.push(2, 7, null, 3000);
    interleave.drain(out);
    // On a tie the lower lane goes first and may still send at 3000: lane 1's heartbeat waits.
    expect(out.lines.slice(4)).toEqual(["h 0 3000"]);
    expect(interleave.waitingFor()).toBe(0);
  });

  it("an item whose ingest_ts is behind the log time is released at the log time", () => {
    const interleave = new PartitionInterleave(2);
    const out = recorder();
    const behind = ev(1600, "behind");
    interleave.push(0, 1, [ev(2000, "a")]);
    interleave.push(1, 2, null, 2000);
    interleave.push(1, 3, [behind]);
    interleave.push(0, 4, null, 3000);
    const seen: TelemetryEvent[] = [];
    interleave.drain({ ...out, event: (lane, e, seq, idx) => (seen.push(e), out.event(lane, e, seq, idx)) });
    expect(out.lines).toEqual(["e 0 1 0 2000 a", "h 1 2000", "e 1 3 0 2000 behind"]);
    expect(interleave.logTime).toBe(2000);
    // Not a copy: the pushed event itself, with its stored ingest_ts back once released.
    expect(seen[1]).toBe(behind);
    expect(behind.ingest_ts).toBe(1600);
  });

  it("ties on the key go to the lower lane, so a lower lane at the same time still holds a higher one", () => {
    const interleave = new PartitionInterleave(2);
    const out = recorder();
    interleave.push(1, 1, [ev(1000, "hi")]);
    interleave.push(0, 2, null, 1000);
    interleave.drain(out);
    // Lane 0 showed 1000 and may send more at 1000, which would come before lane 1's event.
    expect(out.lines).toEqual(["h 0 1000"]);
    interleave.push(0, 3, null, 1001);
    interleave.drain(out);
    expect(out.lines).toEqual(["h 0 1000", "e 1 1 0 1000 hi"]);
  });

  it("reports a message released in part as partial, and skips those events after a restore", () => {
    const interleave = new PartitionInterleave(1);
    const out = recorder();
    interleave.push(0, 7, [ev(1, "a"), ev(2, "b"), ev(3, "c")]);
    interleave.drain(out, 2);
    expect(interleave.offsets()).toEqual([{ lastSeq: 0, partialSeq: 7, partialCount: 2, logTime: 2 }]);
    const again = new PartitionInterleave(1, interleave.offsets());
    again.push(0, 7, [ev(1, "a"), ev(2, "b"), ev(3, "c")]);
    again.drain(out);
    expect(out.lines).toEqual(["e 0 7 0 1 a", "e 0 7 1 2 b", "e 0 7 2 3 c"]);
    expect(again.offsets()[0]?.lastSeq).toBe(7);
  });

  it("counts the events queued per lane as they are released, a restored message's skipped ones left out", () => {
    const interleave = new PartitionInterleave(2, [
      { lastSeq: 0, partialSeq: 3, partialCount: 1, logTime: null },
      { lastSeq: 0, partialSeq: 0, partialCount: 0, logTime: null },
    ]);
    const out = recorder();
    interleave.push(0, 3, [ev(1, "a"), ev(2, "b"), ev(3, "c")]); // its first event went out before the restore
    interleave.push(0, 4, null, 4);
    interleave.push(0, 5, [ev(5, "d"), ev(6, "e")]);
    expect([interleave.queuedEvents(0), interleave.queuedEvents(1)]).toEqual([4, 0]);
    interleave.push(1, 1, [ev(10, "x")]);
    interleave.drain(out, 1);
    expect(interleave.queuedEvents(0)).toBe(3);
    interleave.drain(out, 2); // b, c (message 3 done), the heartbeat
    expect(interleave.queuedEvents(0)).toBe(2);
    interleave.drain(out);
    expect([
      interleave.queuedEvents(0),
      interleave.queued(0),
      interleave.queuedEvents(1),
      interleave.queued(1),
    ]).toEqual([0, 0, 1, 1]);
  });
});
