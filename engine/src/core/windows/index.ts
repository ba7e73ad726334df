/**
 * core/windows — windows and the aggregates they share (docs/semantics.md, "Windows";
 * docs/decisions/0022-sliced-windows.md).
 *
 * Owns: where an event belongs in event time (WindowAssigner: tumbling and sliding windows built
 * from non-overlapping slices), the one aggregate per (slice, key) (count, errors, DDSketch, HLL),
 * the open state of slices and windows, a window combining its slices' keys
 * (window-combine.ts), the keys' cardinality caps, the timer queues and the window timers, and a
 * window's life from its first event to its last policy's close.
 *
 * May import: protocol, @tidemark/sketches, core/panes/ and core/dial/ types (a window holds each
 * policy's pane progress and measured points) and panes/pane-tracks.ts' newPaneTracks (a key's
 * empty progress), core/watermarks/ (scheduling by watermark). No I/O, no clock, no env.
 *
 * Invariants: assignment is a pure function of `ts`; one aggregate per (slice, key) whatever the
 * number of policies; a window's state is freed once the last policy and the bias reference have
 * closed it.
 */
export type { Aggregate, AggregateKind } from "./aggregate.js";
export { KeyRegistry, OTHER_ROUTE, OTHER_SERVICE } from "./key-registry.js";
export { sketchAggregates } from "./sketch-aggregate.js";
export { TimerQueue, type Timer } from "./timer-queue.js";
export { windowSpec, windowStartsOf, type WindowSpec } from "./window-assigner.js";
export { keyIdOf, type Slice, type Window } from "./window-state.js";
export type { CoreTimer, WindowTimer } from "./window-timer.js";
