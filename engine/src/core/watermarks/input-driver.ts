/**
 * The input driver (docs/decisions/0010-core-state-and-idleness.md, "One input driver"): the part of
 * an operator that takes StreamCore's inputs — records, heartbeats — and keeps time: partition
 * clocks, log time, every policy's watermark (with partition idleness, judged in log time), the
 * timer queues (one by log time, one by W per event-time policy) and the policies' early ticks.
 * The window core and the session operator each compose one and hook in what they do with a placed
 * record and a due timer, so both see inputs, watermarks and timers exactly alike.
 *
 * Invariants. Log time never moves back; every W is monotone. A hook runs only when every timer due
 * before its moment has fired: `place` after log time and watermarks include the record, `fire` in
 * the timers' total order. After a record is placed, every timer it made due fires before the next
 * input. Inputs the driver cannot place (partition out of range, non-finite time, negative latency)
 * throw a coded CoreError before any state changes.
 */
import type { PartitionProgress, TelemetryEvent } from "../../protocol.js";
import { watermarkOf, type ClockState } from "./clock-state.js";
import { CoreError } from "../errors.js";
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { TimerKind, TimerQueue, type EarlyTimer, type Timer } from "../windows/timer-queue.js";
import type { CoreOutput } from "../types.js";
import { eventTimeCandidate, type PartitionClock } from "./watermark.js";

/** What an operator does with the driver's inputs and timers. */
export interface OperatorHooks<T extends Timer> {
  /** Places one record; log time and watermarks already include it. */
  place(e: TelemetryEvent, out: CoreOutput): void;
  /** The policy's early tick is due (the driver re-arms it). */
  earlyTick(p: PolicyState, out: CoreOutput): void;
  /** Acts on a due timer of the operator's own. */
  fire(t: T, out: CoreOutput): void;
  /** Log time or a watermark may have moved and every due timer fired: the operator's upkeep. */
  advanced(): void;
}

/** What operator code may ask of its driver: the clock, watermarks, and arming timers. */
export interface DriverView<T extends Timer> {
  readonly clock: ClockState;
  watermarkOf(p: PolicyState): number;
  /** The due of a timer that acts when the policy's W reaches event time `at` (on its W queue). */
  dueAt(p: PolicyState, at: number): number;
  /** Arms a timer due by the policy's W (its due from dueAt). */
  atWatermark(p: PolicyState, t: T): void;
  /** Arms a timer due by log time. */
  atLogTime(t: T): void;
}

export class InputDriver<T extends Timer> implements DriverView<T> {
  private readonly timers: TimerQueue<T | EarlyTimer>;
  /** Per policy: the queue ordered by W of an event-time policy (null: it uses the log-time queue). */
  private readonly watermarkTimers: (TimerQueue<T | EarlyTimer> | null)[];
  private readonly eventTimePolicies: PolicyState[];
  private readonly percentilePolicies: PolicyState[];

  /** `clock` may be fresh or decoded from a snapshot: pending early ticks are re-armed from it. */
  constructor(
    readonly clock: ClockState,
    private readonly idleTimeoutMs: number,
    before: (a: T | EarlyTimer, b: T | EarlyTimer) => boolean,
    private readonly hooks: OperatorHooks<T>,
  ) {
    const policies = clock.policies;
    this.timers = new TimerQueue(before);
    this.watermarkTimers = policies.map((p) => (p.eventTime ? new TimerQueue(before) : null));
    this.eventTimePolicies = policies.filter((p) => p.eventTime);
    this.percentilePolicies = policies.filter((p) => p.samples !== null);
    for (const p of policies)
      if (Number.isFinite(p.nextEarly) && p.cfg.earlyEveryMs !== null)
        this.timers.push({ due: p.nextEarly, kind: TimerKind.Early, policy: p.index });
  }

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    if (!Number.isFinite(e.ts) || !Number.isFinite(e.ingest_ts) || !(e.latency_ms >= 0 && e.latency_ms < Infinity))
      throw new CoreError(
        "TM_CORE_BAD_EVENT",
        `event ts=${e.ts} ingest_ts=${e.ingest_ts} latency_ms=${e.latency_ms}: times must be finite ms and latency a finite number >= 0 (ingest validates this)`,
      );
    const part = this.partition(partition);
    part.spoken = true;
    // A record makes its partition active again (heartbeats do not): idleness is judged in log time.
    part.lastEventAt = Math.max(this.clock.logTime, e.ingest_ts);
    if (e.ingest_ts > part.logTime) part.logTime = e.ingest_ts;
    if (e.ts > part.maxTs) part.maxTs = e.ts;
    if (this.percentilePolicies.length > 0)
      for (const p of this.percentilePolicies) p.samples?.[partition]?.push(e.ingest_ts - e.ts);
    this.clock.eventsTotal++;
    this.advance(e.ingest_ts, out);
    this.hooks.place(e, out);
    this.settle(out);
  }

  /**
   * A merged tick of stage-1 partials (docs/decisions/0029-two-stage-dataflow.md): the partitions'
   * clocks after it, its records' count, judged at log time `at` (the tick's start); `place` adds
   * the tick's aggregates once log time and watermarks include it.
   */
  partial(at: number, clocks: readonly PartitionProgress[], out: CoreOutput, place: () => void): void {
    if (!Number.isFinite(at))
      throw new CoreError("TM_CORE_BAD_EVENT", `partial tick at ${at} is not a finite time in ms`);
    const parts = clocks.map((c) => this.partition(c.partition));
    clocks.forEach((c, i) => {
      const part = parts[i] as PartitionClock;
      part.spoken = true;
      part.lastEventAt = Math.max(part.lastEventAt, c.lastEventAt);
      if (c.lastEventAt > part.logTime) part.logTime = c.lastEventAt;
      if (c.maxTs > part.maxTs) part.maxTs = c.maxTs;
      this.clock.eventsTotal += c.events;
      if (c.delays !== undefined) this.takeDelays(c.partition, c.delays);
    });
    this.advance(at, out);
    place();
    this.settle(out);
  }

  /** Each percentile policy's delay quantile of `partition` (those with a sample); undefined without such policies. */
  delayQuantiles(partition: number): Record<string, number> | undefined {
    if (this.percentilePolicies.length === 0) return undefined;
    const out: Record<string, number> = {};
    for (const p of this.percentilePolicies) {
      const s = p.samples?.[partition];
      if (s !== undefined && s.filled > 0) out[p.cfg.name] = s.quantile;
    }
    return out;
  }

  /**
   * The merge stage's percentile watermarks: each partition's delay quantile as its worker's sample
   * holds it after the tick (docs/decisions/0029-two-stage-dataflow.md, "Percentile policies").
   */
  private takeDelays(partition: number, delays: Readonly<Record<string, number>>): void {
    for (const p of this.percentilePolicies) {
      const q = delays[p.cfg.name];
      const s = p.samples?.[partition];
      if (q === undefined || s === undefined) continue;
      s.quantile = q;
      if (s.filled === 0) {
        s.ring[0] = q;
        s.filled = 1;
      }
    }
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    if (!Number.isFinite(ingestTs))
      throw new CoreError("TM_CORE_BAD_EVENT", `heartbeat ingest_ts=${ingestTs} is not a finite time in ms`);
    const part = this.partition(partition);
    part.spoken = true;
    if (ingestTs > part.logTime) part.logTime = ingestTs;
    this.advance(ingestTs, out);
  }

  /** Log time reached `t` through input this core was not fed (another group's: StreamCore.advance); no partition spoke. */
  tick(t: number, out: CoreOutput): void {
    if (t > this.clock.logTime) this.advance(t, out);
  }

  watermarkOf(p: PolicyState): number {
    return watermarkOf(this.clock, p);
  }

  dueAt(p: PolicyState, at: number): number {
    return at + p.lagMs;
  }

  atWatermark(p: PolicyState, t: T): void {
    (this.watermarkTimers[p.index] ?? this.timers).push(t);
  }

  atLogTime(t: T): void {
    this.timers.push(t);
  }

  private partition(partition: number): PartitionClock {
    const p = this.clock.partitions[partition];
    if (p === undefined)
      throw new CoreError(
        "TM_CORE_BAD_PARTITION",
        `partition ${partition} is outside 0..${this.clock.partitions.length - 1}: configure partitions to match TM_EVENTS`,
      );
    return p;
  }

  /** Moves log time (and event-time watermarks) forward and fires every due timer. */
  private advance(t: number, out: CoreOutput): void {
    const clock = this.clock;
    if (t > clock.logTime) {
      if (clock.logTime === -Infinity) this.start(t);
      clock.logTime = t;
    }
    if (this.timers.peekDue() <= clock.logTime) this.drain(this.timers, clock.logTime, out);
    for (const p of this.eventTimePolicies) {
      const c = eventTimeCandidate(p.cfg.watermark, clock.partitions, p.samples, clock.logTime, this.idleTimeoutMs);
      if (c !== null && c > p.eventTimeWatermark) p.eventTimeWatermark = c;
      this.drain(this.watermarkTimers[p.index] as TimerQueue<T | EarlyTimer>, p.eventTimeWatermark, out);
    }
    this.hooks.advanced();
  }

  /** Fires what placing a record made due (watermarks did not move). */
  private settle(out: CoreOutput): void {
    if (this.timers.peekDue() <= this.clock.logTime) this.drain(this.timers, this.clock.logTime, out);
    if (this.eventTimePolicies.length === 0) return;
    for (const p of this.eventTimePolicies)
      this.drain(this.watermarkTimers[p.index] as TimerQueue<T | EarlyTimer>, p.eventTimeWatermark, out);
  }

  private drain(q: TimerQueue<T | EarlyTimer>, until: number, out: CoreOutput): void {
    while (q.peekDue() <= until) {
      const t = q.pop() as T | EarlyTimer;
      if (t.kind !== TimerKind.Early) this.hooks.fire(t as T, out);
      else {
        const p = this.clock.policies[t.policy] as PolicyState;
        this.hooks.earlyTick(p, out);
        this.armEarly(p, this.clock.logTime);
      }
    }
  }

  /**
   * The first input: every policy with early panes gets its first tick, and a partition without a
   * record yet counts its silence from now.
   */
  private start(t: number): void {
    for (const p of this.clock.partitions) if (p.lastEventAt === -Infinity) p.lastEventAt = t;
    for (const p of this.clock.policies) if (p.cfg.earlyEveryMs !== null && emitsOnTime(p)) this.armEarly(p, t);
  }

  private armEarly(p: PolicyState, now: number): void {
    const every = p.cfg.earlyEveryMs as number;
    p.nextEarly = Math.floor(now / every) * every + every;
    this.timers.push({ due: p.nextEarly, kind: TimerKind.Early, policy: p.index });
  }
}
