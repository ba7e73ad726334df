/**
 * Notices when the interleave has waited on one partition for long (docs/operations.md, "Partition
 * ownership"). Every ingest instance sends a heartbeat to every partition each second, so a
 * partition whose time has not moved for STALL_MS while the interleave waits for it is a fault to fix
 * (its producers stopped, its consumer is lost), not a quiet partition. Wall clock, for the log
 * only: nothing the engine computes depends on it; the rule is core/watermarks/silence.ts's.
 */
import { Silence } from "../../core/watermarks/silence.js";

/** Ten missed heartbeats. */
export const STALL_MS = 10_000;
/**
 * Two missed heartbeats: from then on the partition the interleave waits for is the one holding everything
 * back (status `heldBackBy`); shorter waits are the interleave's normal rhythm (each lane's next message).
 */
export const HOLD_MS = 2_000;

export class StallWatch {
  private readonly times: Array<number | null>;
  /** Per lane: the wall clock when its time last moved. */
  private readonly movedAt: Silence;
  private reported: number | null = null;

  constructor(lanes: number, now: number) {
    this.times = new Array<number | null>(lanes).fill(null);
    this.movedAt = new Silence(lanes, now);
  }

  /**
   * Called with each status: the lane the interleave waits for (or null), each lane's largest
   * ingest_ts shown, and the wall clock. Returns a lane once when it starts to count as
   * stalled, else null.
   */
  observe(waitingFor: number | null, laneTimes: ReadonlyArray<number | null>, now: number): number | null {
    laneTimes.forEach((t, lane) => {
      if (t === this.times[lane]) return;
      this.times[lane] = t;
      this.movedAt.heard(lane, now);
    });
    const stalled = waitingFor !== null && this.movedAt.silent(waitingFor, now, STALL_MS);
    if (!stalled) {
      this.reported = null;
      return null;
    }
    if (this.reported === waitingFor) return null;
    this.reported = waitingFor;
    return waitingFor;
  }

  /** The lane the interleave has waited on for at least HOLD_MS (its time not moving), else null. */
  holding(waitingFor: number | null, now: number): number | null {
    return waitingFor !== null && this.movedAt.silent(waitingFor, now, HOLD_MS) ? waitingFor : null;
  }

  /** A reconnect restarts the clocks: silence while disconnected was ours. */
  restart(now: number): void {
    this.movedAt.restart(now);
    this.reported = null;
  }
}
