/**
 * HoldWatch: when held input goes to the log (docs/decisions/0035-backpressure.md, "Held input").
 * Under backpressure the input is held in many holds — a window fills, drains to half, fills again
 * — so the watch looks at the share of wall time held over each WINDOW_MS: at half or more it is
 * reported (at most once every REPEAT_MS while it lasts), and the first window under half after
 * that is reported as the input flowing again. Shorter spells are only counted
 * (tidemark_engine_input_held_seconds_total).
 *
 * Pure: times are arguments.
 */
import type { HoldCause } from "../output/input-hold.js";

export const WINDOW_MS = 10_000;
const REPEAT_MS = 30_000;
const REPORTED_SHARE = 0.5;

export type HoldNotice =
  | { kind: "held"; share: number; windowMs: number; cause: HoldCause | null }
  | { kind: "flowing"; share: number; windowMs: number };

export class HoldWatch {
  private windowStart: number | null = null;
  private heldAtStart = 0;
  private reportedAt: number | null = null;

  /** Called every status period with the total held so far and the cause of the last hold. */
  observe(now: number, totalHeldMs: number, cause: HoldCause | null): HoldNotice | null {
    if (this.windowStart === null || now < this.windowStart) {
      this.windowStart = now;
      this.heldAtStart = totalHeldMs;
      return null;
    }
    const windowMs = now - this.windowStart;
    if (windowMs < WINDOW_MS) return null;
    const share = Math.min(1, (totalHeldMs - this.heldAtStart) / windowMs);
    this.windowStart = now;
    this.heldAtStart = totalHeldMs;
    if (share >= REPORTED_SHARE) {
      if (this.reportedAt !== null && now - this.reportedAt < REPEAT_MS) return null;
      this.reportedAt = now;
      return { kind: "held", share, windowMs, cause };
    }
    if (this.reportedAt === null) return null;
    this.reportedAt = null;
    return { kind: "flowing", share, windowMs };
  }
}
