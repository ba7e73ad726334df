/**
 * InputHold: how long an operator's input has been held by backpressure — a sink whose
 * acknowledgements lag (docs/decisions/0035-backpressure.md, "Held input") — and which stream held
 * it: the hold in progress, the last one's length, and the total
 * (tidemark_engine_input_held_seconds_total). A checkpoint's pause is not counted here: it has its
 * own histogram (docs/decisions/0016-checkpoints-without-pause.md).
 *
 * Pure: the clock is an argument.
 */

/** The output whose acknowledgements hold the input. */
export type HoldCause = "TM_PANES" | "TM_PARTIALS";

export interface HoldNow {
  cause: HoldCause;
  /** Wall ms since the hold began. */
  heldMs: number;
}

export class InputHold {
  private cause: HoldCause | null = null;
  private since = 0;
  private doneMs = 0;
  /** The length of the last hold that ended, ms (0: none yet). */
  lastMs = 0;
  /** Holds begun so far. */
  holds = 0;
  /** The stream that held the input last (or holds it now), null: never held. */
  lastCause: HoldCause | null = null;

  constructor(private readonly clock: () => number) {}

  /** The input is held from now by `cause` (a hold in progress goes on). */
  start(cause: HoldCause): void {
    if (this.cause !== null) return;
    this.cause = cause;
    this.lastCause = cause;
    this.since = this.clock();
    this.holds++;
  }

  /** The hold in progress, if any, ends now. */
  end(): void {
    if (this.cause === null) return;
    this.lastMs = this.clock() - this.since;
    this.doneMs += this.lastMs;
    this.cause = null;
  }

  /** The hold in progress, null when the input flows. */
  current(): HoldNow | null {
    return this.cause === null ? null : { cause: this.cause, heldMs: this.clock() - this.since };
  }

  /** Wall ms held in total, the hold in progress included. */
  totalMs(): number {
    return this.doneMs + (this.cause === null ? 0 : this.clock() - this.since);
  }
}
