/**
 * core/dial — the measured dial: bias, emit delay, correlated lateness, the nowcast
 * (docs/semantics.md, "Measured bias", "Correlated lateness", "Nowcast").
 *
 * Owns: comparing what each policy showed of a window with the reference once it closes, the
 * rolling means with their 95 % intervals per (policy, window size, service, pane kind and age),
 * the pooled per-policy figures, provisional (lower-bound) bias before the first close, the
 * lateness test, the nowcast and its own measured error, and their snapshot pieces.
 *
 * May import: protocol, core/windows/, core/panes/ (the points measured), core/snapshot/
 * (codecs). No I/O, no clock, no env.
 *
 * Invariants: a measurement compares values of the same window and key; a mean is over the last
 * N closed windows only; nothing is measured that the reference has not closed, and what is
 * provisional says so.
 */
export { BiasTracker, measureBias, type BiasSample, type BiasSummary } from "./bias.js";
export { dialStatus, type PolicyDialStatus } from "./dial-status.js";
export { correlate, LatenessWindow } from "./lateness.js";
export { nowcastOf } from "./nowcast.js";
export { newPolicyDial, pooledBias, type PolicyDial } from "./policy-dial.js";
export { measureProvisional } from "./provisional.js";
export { measureWindow } from "./window-measure.js";
