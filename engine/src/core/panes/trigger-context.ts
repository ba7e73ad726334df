/**
 * What a trigger may touch of the operator that runs it (docs/decisions/0010-core-state-and-idleness.md,
 * "Triggers through a narrow context"): log time, a policy's watermark, the timer queue, the output,
 * releasing a window, and the policy's measured dial. Triggers never see the operator or its state beyond the window and the
 * policy they are handed.
 */
import type { PolicyDial } from "../dial/policy-dial.js";
import type { PolicyState } from "./policy-state.js";
import type { CoreOutput } from "../types.js";
import type { WindowTimer } from "../windows/window-timer.js";
import type { Window } from "../windows/window-state.js";

export interface TriggerContext {
  /** Log time now (the emission time of every pane). */
  readonly logTime: number;
  /** The policy's W now. */
  watermarkOf(p: PolicyState): number;
  /** Arms a timer on the log-time queue. */
  schedule(t: WindowTimer): void;
  /** Where panes go. */
  readonly out: CoreOutput;
  /** Releases a window every closer is done with, and the slices only it still held. */
  free(w: Window): void;
  /** The policy's measured dial for a window config (its panes' bias; what closing a window measures). */
  dialOf(p: PolicyState, configIndex: number): PolicyDial;
}
