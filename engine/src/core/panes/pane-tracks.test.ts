import { describe, expect, it } from "vitest";
import type { PaneValue } from "../../protocol.js";
import { CoreError } from "../errors.js";
import { Prng } from "../prng.js";
import { ByteReader, ByteWriter } from "../snapshot/byte-codec.js";
import { readTracks, writeKindPoints, writeTracks, writeValue } from "../snapshot/snapshot-parts.js";
import type { Aggregate } from "../windows/aggregate.js";
import { sketchAggregates } from "../windows/sketch-aggregate.js";
import { newKindPoints, recordPoint, type KindPoints } from "./kind-points.js";
import { SLOTS } from "./kind-slot.js";
import {
  addLate,
  clearLateDirty,
  hasTrack,
  isLateDirty,
  lastAggOf,
  lastCountOf,
  lastSlotOf,
  lastValueOf,
  lateAcceptedOf,
  newPaneTracks,
  openTrack,
  pointsOfTrack,
  seqOf,
  setLastAgg,
  setLastCount,
  setLastSlot,
  setLastValue,
  setPoints,
  setSeq,
  setTrack,
  type PaneTracks,
  type TrackFields,
} from "./pane-tracks.js";
import { numbersOfValue, valueOfNumbers } from "../windows/value-numbers.js";

/** The representation pane-tracks.ts replaced: one object per (policy, window, key), with the fields a snapshot holds. */
type OldTrack = TrackFields;

const newOld = (): OldTrack => ({
  seq: 0,
  lastCount: 0,
  lastValue: null,
  lastAgg: null,
  lateAccepted: 0,
  lateDirty: false,
  points: null,
  lastSlot: -1,
});

const kind = sketchAggregates(0.01, 14);

function randomValue(rng: Prng): PaneValue {
  const count = rng.int(5000);
  const errors = rng.int(count + 1);
  const v: PaneValue = {
    count,
    errors,
    errorRate: count === 0 ? 0 : errors / count,
    p50: rng.next() * 100,
    p90: rng.next() * 1000,
    p95: rng.int(3) === 0 ? 0 : rng.next() * 2000,
    p99: rng.next() * 5000,
    p999: rng.next() * 1e6,
    users: rng.int(100000),
  };
  if (rng.int(5) === 0) v.latencyAbove = Object.freeze({ "300": rng.int(count + 1), "1000": rng.int(count + 1) });
  return Object.freeze(v);
}

function randomAggregate(rng: Prng): Aggregate {
  const a = kind.create(rng.int(2) === 0);
  for (let k = rng.int(40); k > 0; k--) a.add(rng.next() * 900, rng.int(9) === 0, kind.hashUser(`u${rng.int(50)}`));
  return a;
}

/** The old writeTracks, as it was: the oracle of the snapshot bytes. */
function writeOld(w: ByteWriter, tracks: (OldTrack | undefined)[]): void {
  for (const t of tracks) {
    w.bool(t !== undefined);
    if (!t) continue;
    w.uint(t.seq);
    w.uint(t.lastCount);
    writeValue(w, t.lastValue);
    w.bool(t.lastAgg !== null);
    if (t.lastAgg) w.bytes(t.lastAgg.encode());
    w.uint(t.lateAccepted);
    w.bool(t.lateDirty);
    writeKindPoints(w, t.points);
    w.uint(t.lastSlot + 1);
  }
}

function expectSame(t: PaneTracks, old: (OldTrack | undefined)[]): void {
  old.forEach((o, p) => {
    expect(hasTrack(t, p)).toBe(o !== undefined);
    expect(lastCountOf(t, p)).toBe(o?.lastCount);
    expect(isLateDirty(t, p)).toBe(o?.lateDirty ?? false);
    expect(pointsOfTrack(t, p)).toEqual(o?.points);
    if (o === undefined) return;
    expect(seqOf(t, p)).toBe(o.seq);
    expect(lateAcceptedOf(t, p)).toBe(o.lateAccepted);
    expect(lastSlotOf(t, p)).toBe(o.lastSlot);
    expect(lastAggOf(t, p)).toBe(o.lastAgg);
    const v = lastValueOf(t, p);
    expect(v).toEqual(o.lastValue);
    // The same JSON a pane carrying it had: fields and their order.
    expect(JSON.stringify(v)).toBe(JSON.stringify(o.lastValue));
  });
}

const bytesOf = (write: (w: ByteWriter) => void): Uint8Array => {
  const w = new ByteWriter();
  write(w);
  return w.finish();
};

describe("pane tracks: one array per (window, key) for every policy", () => {
  it("holds what one object per policy held, through random panes, late events and snapshot round trips", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rng = new Prng(seed);
      const policies = 1 + rng.int(4);
      // A policy keeps a value (retracting), an aggregate (discarding) or neither, as its mode says.
      const modes = Array.from({ length: policies }, () => rng.int(3));
      let t = newPaneTracks(policies);
      const old: (OldTrack | undefined)[] = new Array<OldTrack | undefined>(policies).fill(undefined);
      for (let step = rng.int(30); step > 0; step--) {
        const p = rng.int(policies);
        const op = rng.int(4);
        if (op === 0) {
          const events = 1 + rng.int(5);
          addLate(t, p, events);
          const o = (old[p] ??= newOld());
          o.lateAccepted += events;
          o.lateDirty = true;
        } else if (op === 1 || op === 2) {
          // A pane, as pane-emitter.ts updates a track.
          openTrack(t, p);
          const o = (old[p] ??= newOld());
          clearLateDirty(t, p);
          o.lateDirty = false;
          const seq = o.seq + 1 + rng.int(2);
          setSeq(t, p, seq);
          o.seq = seq;
          const slot = rng.int(SLOTS);
          setLastSlot(t, p, slot);
          o.lastSlot = slot;
          const count = rng.int(10000);
          setLastCount(t, p, count);
          o.lastCount = count;
          if (modes[p] === 1) {
            const v = randomValue(rng);
            const shared = v.latencyAbove === undefined && rng.int(2) === 0 ? numbersOfValue(v) : undefined;
            setLastValue(t, p, v, shared);
            o.lastValue = v;
          } else if (modes[p] === 2) {
            const a = randomAggregate(rng);
            setLastAgg(t, p, a);
            o.lastAgg = a;
          }
          if (rng.int(2) === 0) {
            const points = pointsOfTrack(t, p) ?? newKindPoints();
            recordPoint(points, slot, randomValue(rng), null);
            setPoints(t, p, points);
            o.points = points;
          }
        } else {
          // A snapshot and its restore: the old format's bytes, and back.
          const bytes = bytesOf((w) => writeTracks(w, { tracks: t, routes: null }, policies));
          expect(bytes).toEqual(bytesOf((w) => writeOld(w, old)));
          const r = new ByteReader(bytes);
          t = readTracks(r, policies, kind, (what) => new CoreError("TM_SNAPSHOT_CORRUPT", what));
          expect(r.done).toBe(true);
          // Decoded aggregates and points are new objects (points' rows in slot order): compare them
          // by their bytes, then go on from the decoded ones.
          old.forEach((o, p) => {
            if (o?.lastAgg) {
              expect(lastAggOf(t, p)?.encode()).toEqual(o.lastAgg.encode());
              o.lastAgg = lastAggOf(t, p);
            }
            if (o?.points) {
              const decoded = pointsOfTrack(t, p) as KindPoints;
              expect(bytesOf((w) => writeKindPoints(w, decoded))).toEqual(bytesOf((w) => writeKindPoints(w, o.points)));
              o.points = decoded;
            }
          });
        }
        expectSame(t, old);
      }
    }
  });

  it("a value kept as numbers reads back as the value: equal, frozen, same JSON", () => {
    const rng = new Prng(7);
    for (let k = 0; k < 500; k++) {
      const v = randomValue(rng);
      const plain: PaneValue = { ...v };
      delete plain.latencyAbove;
      const back = valueOfNumbers(numbersOfValue(plain));
      expect(back).toEqual(plain);
      expect(Object.isFrozen(back)).toBe(true);
      expect(JSON.stringify(back)).toBe(JSON.stringify(plain));
    }
    // −0 and integers survive too.
    const z = valueOfNumbers(numbersOfValue({ ...valueOfNumbers([0, 0, 0, -0, 1, 2, 3, 4, 5]) }));
    expect(Object.is(z.p50, -0)).toBe(true);
  });

  it("flags hold any lastSlot a snapshot may carry, exactly, beside lateDirty", () => {
    const t = newPaneTracks(2);
    for (const lastSlot of [-1, 0, 12, 2 ** 29, 2 ** 40]) {
      setTrack(t, 1, { ...newOld(), lastSlot, lateDirty: true });
      expect([lastSlotOf(t, 1), isLateDirty(t, 1), hasTrack(t, 0)]).toEqual([lastSlot, true, false]);
      clearLateDirty(t, 1);
      expect([lastSlotOf(t, 1), isLateDirty(t, 1)]).toEqual([lastSlot, false]);
      addLate(t, 1, 2);
      addLate(t, 1, 1);
      expect([lastSlotOf(t, 1), isLateDirty(t, 1), lateAcceptedOf(t, 1)]).toEqual([lastSlot, true, 3]);
    }
  });

  it("a snapshot track keeping both a last value and a last aggregate is refused with the snapshot's error", () => {
    const old = [{ ...newOld(), lastValue: randomValue(new Prng(1)), lastAgg: kind.create() }];
    const r = new ByteReader(bytesOf((w) => writeOld(w, old)));
    expect(() => readTracks(r, 1, kind, (what) => new CoreError("TM_SNAPSHOT_CORRUPT", what))).toThrow(
      /both a last value and a last aggregate/,
    );
  });
});
