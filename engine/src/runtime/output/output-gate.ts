/**
 * OutputGate: between an operator's input and its publishers (docs/decisions/0035-backpressure.md,
 * "Held input"). While a publisher is saturated — its window full, or messages waiting for room in
 * it — the gate is shut: the operator releases nothing more to its core, its readers stop pulling,
 * and the time is counted (InputHold) against the stream that shut it. The gate opens once that
 * publisher has room again (under half of its bounds), and says so with `onOpen`.
 */
import { InputHold, type HoldCause } from "./input-hold.js";

/** What the gate needs of a publisher (PaneSink, PaneThreadSink, StageOnePartials). */
export interface GatedOutput {
  readonly saturated: boolean;
  room(): Promise<void>;
}

export class OutputGate {
  readonly hold: InputHold;
  private shut: Promise<void> | undefined;

  constructor(
    private readonly outputs: ReadonlyArray<{ cause: HoldCause; out: GatedOutput | null }>,
    clock: () => number,
    private readonly onOpen: () => void = () => undefined,
  ) {
    this.hold = new InputHold(clock);
  }

  /** Resolves once the saturated publisher has room; undefined when none is saturated (the input flows). */
  blocked(): Promise<void> | undefined {
    if (this.shut) return this.shut;
    const full = this.outputs.find((o) => o.out?.saturated === true);
    if (full === undefined || full.out === null) return undefined;
    this.hold.start(full.cause);
    this.shut = full.out.room().then(() => {
      this.shut = undefined;
      this.hold.end();
      this.onOpen();
    });
    return this.shut;
  }
}
