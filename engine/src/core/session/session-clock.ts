/**
 * The driving half of the session operator: StreamCore's inputs (event, heartbeat, setIdle), the
 * partition clocks, log time, the policies' watermarks (the core's watermark and policy modules)
 * and the timer queues they drain. What sessions do with an event or a timer is the subclass's.
 */
import type { TelemetryEvent } from "../../protocol.js";
import { CoreError } from "../errors.js";
import { emitsOnTime, policyRuntimes, type PolicyRuntime } from "../policy-runtime.js";
import { TimerKind, TimerQueue, type Timer } from "../timer-queue.js";
import type { CoreConfig, CoreOutput, PolicyConfig } from "../types.js";
import { eventTimeCandidate, newPartitionClock, type PartitionClock } from "../watermark.js";

export abstract class SessionClock {
  /** The configured policies, then the hidden bias reference at index P. */
  readonly pols: PolicyRuntime[];
  readonly P: number;
  readonly parts: PartitionClock[];
  readonly timers = new TimerQueue();
  logTime = -Infinity;
  eventsTotal = 0;
  private readonly eventTimePols: PolicyRuntime[];
  private readonly percentilePols: PolicyRuntime[];

  constructor(
    readonly config: CoreConfig,
    reference: PolicyConfig,
  ) {
    this.P = config.policies.length;
    this.pols = policyRuntimes({ ...config, policies: [...config.policies, reference] });
    this.parts = Array.from({ length: config.partitions }, newPartitionClock);
    this.eventTimePols = this.pols.filter((p) => p.eventTime);
    this.percentilePols = this.pols.filter((p) => p.samples !== null);
  }

  /** Places a record (log time already advanced to its ingest_ts). */
  protected abstract assign(e: TelemetryEvent, out: CoreOutput): void;
  /** Acts on a due timer. */
  protected abstract fire(t: Timer, out: CoreOutput): void;

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    const part = this.part(partition);
    part.spoken = true;
    if (e.ingest_ts > part.logTime) part.logTime = e.ingest_ts;
    if (e.ts > part.maxTs) part.maxTs = e.ts;
    for (const p of this.percentilePols) p.samples?.[partition]?.push(e.ingest_ts - e.ts);
    this.eventsTotal++;
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

  watermarkOf(p: PolicyRuntime): number {
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
    if (t > this.logTime) {
      if (this.logTime === -Infinity) this.start(t);
      this.logTime = t;
    }
    while (this.timers.peekDue() <= this.logTime) this.fire(this.timers.pop() as Timer, out);
    for (const p of this.eventTimePols) {
      const c = eventTimeCandidate(p.cfg.watermark, this.parts, p.samples);
      if (c !== null && c > p.W) p.W = c;
      const q = p.timers as TimerQueue;
      while (q.peekDue() <= p.W) this.fire(q.pop() as Timer, out);
    }
  }

  private start(t: number): void {
    for (const p of this.pols) if (p.cfg.earlyEveryMs !== null && emitsOnTime(p)) this.scheduleEarly(p, t);
  }

  scheduleEarly(p: PolicyRuntime, now: number): void {
    const every = p.cfg.earlyEveryMs as number;
    p.nextEarly = Math.floor(now / every) * every + every;
    this.timers.push({ due: p.nextEarly, kind: TimerKind.Early, policy: p.index, wc: -1, start: 0 });
  }

  /** Pushes a timer due when the policy's W reaches event time `at`; returns its due. */
  protected schedule(p: PolicyRuntime, kind: TimerKind, at: number, id: number): number {
    const q = p.eventTime ? (p.timers as TimerQueue) : this.timers;
    const due = at + p.lagMs;
    q.push({ due, kind, policy: p.index, wc: id, start: 0 });
    return due;
  }
}
