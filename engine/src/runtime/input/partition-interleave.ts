/**
 * The deterministic partition interleave (docs/decisions/0006-engine-runtime.md).
 *
 * Each owned partition of TM_EVENTS is a lane: an ordered queue of messages (event batches and
 * heartbeats) in stream order. The interleave releases items to the core in the total order
 * (key, lane, stream sequence, index in batch), where an item's key is
 * max(its ingest_ts, the interleave's log time so far). An item is released only when no lane can
 * still deliver an item ordered before it: a lane with queued items bounds the release by its
 * head, an empty lane by (max(the largest ingest_ts it has shown, log time), lane). So the order
 * of releases does not depend on when messages arrive, and a replay releases the very same
 * sequence.
 *
 * Invariant: every lane speaks. Every ingest instance sends a heartbeat to every partition each
 * second (docs/ingest.md), so a lane that delivers nothing at all, not even a heartbeat, is a
 * fault (a stopped producer, a lost consumer), not a quiet partition. The interleave then waits for
 * it rather than guess: nothing past that lane's last time is released, and `waitingFor()` names
 * it (the status reports it as `heldBackBy`). Whether a partition is idle, i.e. sends heartbeats
 * but no events, is the core's judgement in log time (docs/semantics.md, "Watermarks"), made on
 * the items this interleave releases; the interleave itself knows no idleness and reads no clock.
 *
 * Pure: no I/O, no clock. Lanes are dense indices 0..n-1, the core's partition numbers. Nothing
 * is allocated per released item but the event itself, made from its message's rows as it goes
 * out (protocol/event-rows.ts): one pass over the lanes finds the next lane and its bound.
 */
import { arrayRows, type EventRows, type TelemetryEvent } from "../../protocol.js";

/** Receives the released items, in interleaved order. */
export interface InterleaveSink {
  /**
   * `event.ingest_ts` is the merged key (equal to the stored one unless that was behind). The
   * merge sets it on the pushed event for the duration of the call, rather than copy the event,
   * and puts the stored value back after: keep what you need of the event, not the event.
   */
  event(lane: number, event: TelemetryEvent, seq: number, index: number): void;
  heartbeat(lane: number, ingestTs: number, seq: number): void;
  /** Every item of the message `seq` of `lane` has been released (its last event, or its heartbeat). */
  done(lane: number, seq: number): void;
}

/** Where a lane stands: the resume point of its consumer. */
export interface LaneOffset {
  /** Stream sequence of the last message fully released (0: none). */
  lastSeq: number;
  /** A message released in part: its sequence and how many events went out (0/0: none). */
  partialSeq: number;
  partialCount: number;
  /** Largest key released from this lane (null: none). */
  logTime: number | null;
  /**
   * Restore only, never written by `offsets()`: the log time of the worker whose checkpoint this
   * lane comes from, when a worker restores lanes other workers wrote (docs/decisions/0057-elastic-workers.md).
   * The lane's items are keyed at least at it, as they were in that worker.
   */
  floor?: number | null;
}

interface Batch {
  readonly seq: number;
  /** Made objects one at a time, as they are released (protocol/event-rows.ts). */
  readonly events: EventRows | null;
  readonly heartbeatTs: number;
  /** First event to release (non-zero only for a message released in part before a restore). */
  readonly start: number;
}

class Lane {
  readonly queue: Batch[] = [];
  head = 0;
  /** Index of the next event in the head batch. */
  pos = 0;
  received = -Infinity;
  released = -Infinity;
  lastSeq = 0;
  pushedSeq = 0;
  skipSeq = 0;
  skipCount = 0;
  /** Events of the queued messages still to release, the head's released ones included. */
  events = 0;

  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Events queued, not yet released. */
  get queuedEvents(): number {
    if (this.queued === 0) return 0;
    return this.events - (this.pos - (this.queue[this.head] as Batch).start);
  }

  /** The stored ingest_ts of the head item (not yet clamped to the log time). */
  headTs(): number {
    const b = this.queue[this.head] as Batch;
    return b.events === null ? b.heartbeatTs : b.events.ingestTs(this.pos);
  }

  finishHead(): void {
    const b = this.queue[this.head] as Batch;
    if (b.events !== null) this.events -= b.events.length - b.start;
    this.lastSeq = b.seq;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.pos = this.queued > 0 ? (this.queue[this.head] as Batch).start : 0;
  }
}

export class PartitionInterleave {
  private readonly lanes: Lane[];
  private time = -Infinity;
  /** Per lane: the least key of its items (restored from other workers; null once log time passed them all). */
  private floors: Float64Array | null = null;
  private maxFloor = -Infinity;
  /** What `scan()` found: the lane whose head comes first (-1: none queued) and the bound of the others. */
  private best = -1;
  private boundKey = Infinity;
  private boundLane = Infinity;

  constructor(laneCount: number, restored?: readonly LaneOffset[]) {
    this.lanes = Array.from({ length: laneCount }, () => new Lane());
    if (restored) this.restore(restored);
  }

  /**
   * Resumes each lane where a checkpoint's `offsets()` left it (before anything is pushed). Lanes
   * with a `floor` come from several workers' checkpoints: log time starts at the least floor, and
   * each lane's items are keyed at least at its own, so every item gets the key it had there.
   */
  restore(restored: readonly LaneOffset[]): void {
    const floors = restored.some((o) => o.floor !== undefined && o.floor !== null);
    if (floors) this.floors = new Float64Array(this.lanes.length).fill(-Infinity);
    let least = Infinity;
    restored.forEach((o, i) => {
      const lane = this.lanes[i];
      if (!lane) return;
      lane.lastSeq = lane.pushedSeq = o.lastSeq;
      lane.skipSeq = o.partialSeq;
      lane.skipCount = o.partialCount;
      if (o.logTime !== null) lane.received = lane.released = o.logTime;
      if (!floors) {
        if (o.logTime !== null && o.logTime > this.time) this.time = o.logTime;
        return;
      }
      const f = o.floor ?? -Infinity;
      (this.floors as Float64Array)[i] = f;
      if (f > this.maxFloor) this.maxFloor = f;
      if (f > -Infinity && f < least) least = f;
    });
    if (floors && least < Infinity) this.time = least;
  }

  /** Largest key released so far: the log time the core has seen. */
  get logTime(): number | null {
    return this.time === -Infinity ? null : this.time;
  }

  /** Enqueues one message of a lane, in stream order; repeats (seq already seen) are ignored. */
  push(lane: number, seq: number, batch: EventRows | readonly TelemetryEvent[] | null, heartbeatTs = 0): void {
    const events = Array.isArray(batch) ? arrayRows(batch as readonly TelemetryEvent[]) : (batch as EventRows | null);
    const l = this.lanes[lane] as Lane;
    if (seq <= l.pushedSeq) return;
    l.pushedSeq = seq;
    const start = seq === l.skipSeq ? l.skipCount : 0;
    if (events !== null && events.length <= start) {
      // Nothing (left) to release: an empty body, or a message fully released before a restore.
      if (l.queued === 0) l.lastSeq = seq;
      return;
    }
    let max = events === null ? heartbeatTs : -Infinity;
    if (events !== null)
      for (let i = 0; i < events.length; i++) {
        const t = events.ingestTs(i);
        if (t > max) max = t;
      }
    if (max > l.received) l.received = max;
    if (l.queued === 0) l.pos = start;
    l.queue.push({ seq, events, heartbeatTs, start });
    if (events !== null) l.events += events.length - start;
  }

  /** Messages queued on a lane (received, not fully released). */
  queued(lane: number): number {
    return (this.lanes[lane] as Lane).queued;
  }

  /** Events queued on a lane, not yet released (the bound on the input, docs/decisions/0035-backpressure.md). */
  queuedEvents(lane: number): number {
    return (this.lanes[lane] as Lane).queuedEvents;
  }

  /** Largest ingest_ts a lane has shown (records or heartbeats), null when none. */
  laneTime(lane: number): number | null {
    const t = (this.lanes[lane] as Lane).received;
    return t === -Infinity ? null : t;
  }

  offsets(): LaneOffset[] {
    return this.lanes.map((l) => {
      const partial = l.queued > 0 && l.pos > 0;
      // A restored message handled in part and not pushed again yet is still handled in part.
      const restored = !partial && l.skipSeq > l.lastSeq;
      return {
        lastSeq: l.lastSeq,
        partialSeq: partial ? (l.queue[l.head] as Batch).seq : restored ? l.skipSeq : 0,
        partialCount: partial ? l.pos : restored ? l.skipCount : 0,
        logTime: l.released === -Infinity ? null : l.released,
      };
    });
  }

  /** Releases, in interleaved order, everything that may go (at most `budget` items); returns the count. */
  drain(sink: InterleaveSink, budget = Infinity): number {
    let released = 0;
    while (released < budget) {
      this.scan();
      if (this.best < 0) break;
      const n = this.releaseFrom(this.best, this.boundKey, this.boundLane, sink, budget - released);
      if (n === 0) break;
      released += n;
    }
    return released;
  }

  /**
   * The lane the interleave waits for: one with nothing queued whose possible next item would come
   * before the first queued item of the others. Null when nothing queued is held back.
   */
  waitingFor(): number | null {
    this.scan();
    if (this.best < 0) return null;
    const k = this.keyOf(this.best, (this.lanes[this.best] as Lane).headTs());
    return k > this.boundKey || (k === this.boundKey && this.best > this.boundLane) ? this.boundLane : null;
  }

  private keyOf(lane: number, ts: number): number {
    const k = ts > this.time ? ts : this.time;
    if (this.floors === null) return k;
    const f = this.floors[lane] as number;
    return f > k ? f : k;
  }

  /**
   * One pass over the lanes: `best`, the queued lane whose head comes first, and the smallest
   * (key, lane) any other lane may still deliver — its head when it has items queued, else
   * (max(the largest ingest_ts it showed, log time), lane) — as `boundKey`, `boundLane`.
   */
  private scan(): void {
    let best = -1;
    let bestKey = Infinity;
    let k1 = Infinity;
    let l1 = Infinity;
    let k2 = Infinity;
    let l2 = Infinity;
    const lanes = this.lanes;
    for (let i = 0; i < lanes.length; i++) {
      const l = lanes[i] as Lane;
      const queued = l.queued > 0;
      const k = this.keyOf(i, queued ? l.headTs() : l.received);
      if (queued && k < bestKey) {
        best = i;
        bestKey = k;
      }
      // The two smallest (key, lane): lanes are visited in order, so a tie keeps the lower lane.
      if (k < k1) {
        k2 = k1;
        l2 = l1;
        k1 = k;
        l1 = i;
      } else if (k < k2) {
        k2 = k;
        l2 = i;
      }
    }
    this.best = best;
    this.boundKey = l1 === best ? k2 : k1;
    this.boundLane = l1 === best ? l2 : l1;
  }

  /** Releases items of `lane` while they come before (boundKey, boundLane); returns how many. */
  private releaseFrom(lane: number, boundKey: number, boundLane: number, sink: InterleaveSink, budget: number): number {
    const l = this.lanes[lane] as Lane;
    let n = 0;
    while (l.queued > 0 && n < budget) {
      const b = l.queue[l.head] as Batch;
      if (b.events === null) {
        const k = this.keyOf(lane, b.heartbeatTs);
        if (k > boundKey || (k === boundKey && lane > boundLane)) return n;
        this.advance(l, k);
        sink.heartbeat(lane, k, b.seq);
        l.finishHead();
        sink.done(lane, b.seq);
        n++;
        continue;
      }
      const events = b.events;
      while (l.pos < events.length) {
        const ts = events.ingestTs(l.pos);
        let k = ts > this.time ? ts : this.time;
        if (this.floors !== null && (this.floors[lane] as number) > k) k = this.floors[lane] as number;
        if (k > boundKey || (k === boundKey && lane > boundLane)) return n;
        this.advance(l, k);
        const e = events.event(l.pos);
        if (k === ts) sink.event(lane, e, b.seq, l.pos);
        else released(sink, lane, e, k, b.seq, l.pos);
        l.pos++;
        if (++n >= budget && l.pos < events.length) return n;
      }
      l.finishHead();
      sink.done(lane, b.seq);
    }
    return n;
  }

  private advance(l: Lane, k: number): void {
    this.time = k;
    l.released = k;
    if (this.floors !== null && k >= this.maxFloor) this.floors = null;
  }
}

/** An event behind the log time goes out with the merged key as its ingest_ts, then gets its own back. */
function released(
  sink: InterleaveSink,
  lane: number,
  e: TelemetryEvent,
  key: number,
  seq: number,
  index: number,
): void {
  const stored = e.ingest_ts;
  e.ingest_ts = key;
  try {
    sink.event(lane, e, seq, index);
  } finally {
    e.ingest_ts = stored;
  }
}
