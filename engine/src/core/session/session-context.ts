/**
 * What the session operator's parts — placing events (session-place.ts), row transitions
 * (slot-transitions.ts), cells (session-cells.ts) and their triggers (cell-triggers.ts) — may use:
 * its state, settings, the input driver's clock and timer arming, the row timers, and the output.
 * None of them sees the operator itself.
 */
import type { DriverView } from "../watermarks/input-driver.js";
import type { PolicyState } from "../panes/policy-state.js";
import type { CoreOutput } from "../types.js";
import type { CellEmitContext } from "./cell-panes.js";
import type { SessionConfig } from "./session-config.js";
import type { SessionState } from "./session-state.js";
import type { SessionTimer } from "./session-timers.js";
import type { SlotTimers } from "./slot-timers.js";

export interface SessionContext {
  readonly state: SessionState;
  readonly settings: Readonly<SessionConfig>;
  readonly referenceHorizonMs: number;
  readonly relativeAccuracy: number;
  /** A key with no event for this long (log time) is forgotten with its sessions closed. */
  readonly keyTtlMs: number;
  readonly driver: DriverView<SessionTimer>;
  readonly timers: SlotTimers;
  /** Emitting panes (its `out` is this context's). */
  readonly emit: CellEmitContext;
  /** Where panes and late records go now. */
  out: CoreOutput;
}

/** The policy's W now. */
export function watermarkOf(ctx: SessionContext, p: PolicyState): number {
  return ctx.driver.watermarkOf(p);
}

/** Bit of policy index i in a mask (indexes up to 31). */
export function bit(i: number): number {
  return (1 << i) >>> 0;
}
