/**
 * core/partials — the two-stage dataflow's pure half (docs/decisions/0029-two-stage-dataflow.md;
 * its runtime half is runtime/merge/ and runtime/worker/stage-one-partials.ts).
 *
 * Owns: stage 1's partial aggregates (PartialAccumulator: beside the core, the records of keys that
 * span partitions folded per tick), stage 2's input alignment (TickAligner: partial batches of
 * every worker, in whatever order, become merged ticks in tick order; a silent partition is left
 * out by core/watermarks/silence.ts's rule) and the placement of a merged tick into the core
 * (place-partial.ts).
 *
 * May import: protocol, core/windows/, core/panes/, core/watermarks/, core/snapshot/ (base64). No
 * I/O, no clock (times are arguments), no env.
 *
 * Invariants: a tick goes out once, when every partition has been reported past its end or is
 * silent; its aggregates are merged per (slice length, slice start, group key) in that order, so
 * the merged tick depends neither on how partitions are spread over workers nor on arrival order;
 * a batch whose partitions are all reported already is a duplicate and changes nothing.
 */
export { PartialAccumulator, type PartialAccumulatorState } from "./partial-accumulator.js";
export { TickAligner, type OfferOutcome, type TickAlignerState } from "./tick-aligner.js";
export { placePartial } from "./place-partial.js";
