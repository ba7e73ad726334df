/**
 * Puts held input in the log (docs/decisions/0035-backpressure.md, "Held input"): called with each
 * status, it logs what HoldWatch reports — the input held half the time or more, with each output
 * stream's window, and later that it flows again.
 */
import { backpressureStatus, type BackpressureSource } from "./backpressure-status.js";
import type { OperatorLog } from "../operator-log.js";
import { HoldWatch } from "./hold-watch.js";

export class HoldLog {
  private readonly watch = new HoldWatch();

  constructor(
    private readonly op: BackpressureSource,
    private readonly log: OperatorLog,
  ) {}

  observe(now: number): void {
    const hold = this.op.gate.hold;
    const notice = this.watch.observe(now, hold.totalMs(), hold.lastCause);
    if (notice === null) return;
    const pct = Math.round(notice.share * 100);
    const seconds = Math.round(notice.windowMs / 1000);
    if (notice.kind === "flowing") {
      this.log.info({ share: notice.share }, `input flows again: held ${pct}% of the last ${seconds} s`);
      return;
    }
    const { streams, checkpointWaiting, heldTotalMs } = backpressureStatus(this.op);
    this.log.warn(
      { share: notice.share, heldBy: notice.cause, heldTotalMs, streams, checkpointWaiting },
      `input held ${pct}% of the last ${seconds} s: ${notice.cause ?? "an output"} acknowledges slowly; ` +
        `lag grows and recovers once the acknowledgements come (memory stays bounded)`,
    );
  }
}
