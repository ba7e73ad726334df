/**
 * The driving half of the session operator: StreamCore's inputs (event, heartbeat, setIdle), the
 * partition clocks, log time, the policies' watermarks (the core's watermark and policy modules)
 * and the timer queues they drain. What sessions do with an event or a timer is the subclass's.
 */
import type { TelemetryEvent } from "../../protocol.js";
import { CoreError } from "../errors.js";
import type { ClockState } from "../clock-state.js";
import { emitsOnTime, type PolicyState } from "../policy-state.js";
import { TimerKind, TimerQueue } from "../timer-queue.js";
import type { CoreConfig, CoreOutput } from "../types.js";
import { eventTimeCandidate, type PartitionClock } from "../watermark.js";
import { sessionTimerBefore, type SessionTimer } from "./session-timer.js";

export abstract class SessionClock {
  /** The configured policies, then the hidden bias reference at index P. */
  readonly pols: PolicyState[];
  readonly P: number;
  readonly parts: PartitionClock[];
  readonly timers = new TimerQueue<SessionTimer>(sessionTimerBefore);
  /** Per policy: the timer queue ordered by W of an event-time policy (null for arrival-lag). */
  readonly watermarkTimers: (TimerQueue<SessionTimer> | null)[];
  private readonly eventTimePols: PolicyState[];
  private readonly percentilePols: PolicyState[];

  constructor(
    readonly config: CoreConfig,
    readonly clock: ClockState,
  ) {
    this.pols = clock.policies;
    this.P = config.policies.length;
    this.parts = clock.partitions;
    this.watermarkTimers = this.pols.map((p) =>
      p.eventTime ? new TimerQueue<SessionTimer>(sessionTimerBefore) : null,
    );
    this.eventTimePols = this.pols.filter((p) => p.eventTime);
    this.percentilePols = this.pols.filter((p) => p.samples !== null);
  }

  get logTime(): number {
    return this.clock.logTime;
  }

  /** Places a record (log time already advanced to its ingest_ts). */
  protected abstract assign(e: TelemetryEvent, out: CoreOutput): void;
  /** Acts on a due timer. */
  protected abstract fire(t: SessionTimer, out: CoreOutput): void;

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    const part = this.part(partition);
    part.spoken = true;
    if (e.ingest_ts > part.logTime) part.logTime = e.ingest_ts;
    if (e.ts > part.maxTs) part.maxTs = e.ts;
    for (const p of this.percentilePols) p.samples?.[partition]?.push(e.ingest_ts - e.ts);
    this.clock.eventsTotal++;
    this.advance(e.ingest_ts, out);
    this.assign(e, out);
    this.advance(this.logTime, out);
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    const part = this.part(partition);
    part.spoken = true;
    if (ingestTs > part.logTime) part.logTime = ingestTs;
    this.advance(ingestTs, out);
  }

  setIdle(partition: number, idle: boolean, out: CoreOutput): void {
    this.part(partition).idle = idle;
    this.advance(this.logTime, out);
  }

  watermarkOf(p: PolicyState): number {
    return p.eventTime ? p.W : this.logTime - p.lagMs;
  }

  private part(partition: number): PartitionClock {
    const p = this.parts[partition];
    if (p === undefined)
      throw new CoreError(
        "TM_CORE_BAD_PARTITION",
        `partition ${partition} is outside 0..${this.parts.length - 1}: configure partitions to match TM_EVENTS`,
      );
    return p;
  }

  protected advance(t: number, out: CoreOutput): void {
    if (t > this.clock.logTime) {
      if (this.clock.logTime === -Infinity) this.start(t);
      this.clock.logTime = t;
    }
    while (this.timers.peekDue() <= this.logTime) this.fire(this.timers.pop() as SessionTimer, out);
    for (const p of this.eventTimePols) {
      const c = eventTimeCandidate(p.cfg.watermark, this.parts, p.samples);
      if (c !== null && c > p.W) p.W = c;
      const q = this.watermarkTimers[p.index] as TimerQueue<SessionTimer>;
      while (q.peekDue() <= p.W) this.fire(q.pop() as SessionTimer, out);
    }
  }

  private start(t: number): void {
    for (const p of this.pols) if (p.cfg.earlyEveryMs !== null && emitsOnTime(p)) this.scheduleEarly(p, t);
  }

  scheduleEarly(p: PolicyState, now: number): void {
    const every = p.cfg.earlyEveryMs as number;
    p.nextEarly = Math.floor(now / every) * every + every;
    this.timers.push({ due: p.nextEarly, kind: TimerKind.Early, policy: p.index });
  }

  /** Log time (arrival-lag) or W (event-time) at which the policy's W reaches event time `at`. */
  protected dueAt(p: PolicyState, at: number): number {
    return at + p.lagMs;
  }

  /** Pushes a timer on the policy's W queue (its due from dueAt). */
  protected pushAtWatermark(p: PolicyState, t: SessionTimer): void {
    (this.watermarkTimers[p.index] ?? this.timers).push(t);
  }
}
