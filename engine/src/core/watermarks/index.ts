/**
 * core/watermarks — time and progress (docs/semantics.md, "Input contract" and "Watermarks";
 * docs/decisions/0010-core-state-and-idleness.md; docs/decisions/0045-operator-host.md, "Progress").
 *
 * Owns: log time, partition clocks and every policy's watermark (arrival-lag, bounded, percentile),
 * partition idleness judged in log time — all decided by the one InputDriver each operator
 * composes — and the one wall-clock rule, Silence (a source not heard of for a timeout of the
 * caller's clock), that the merge stage's tick aligner, its checkpoint alignment and the stall
 * watch apply.
 *
 * May import: protocol, core/windows/ (timer queues), core/panes/policy-state.ts. No I/O, no
 * clock (times are arguments), no env.
 *
 * Invariants: log time never moves back and every watermark is monotone; a hook runs only when
 * every timer due before its moment has fired; an input the driver cannot place throws a coded
 * CoreError before any state changes. Nothing here reads the wall clock: Silence is handed it.
 */
export { InputDriver, type DriverView, type OperatorHooks } from "./input-driver.js";
export { newClockState, watermarkOf, type ClockState } from "./clock-state.js";
export { describeStrategy, isEventTime, type PartitionClock } from "./watermark.js";
export { Silence, silentSince } from "./silence.js";
