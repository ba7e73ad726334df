/**
 * runtime/input — reading the log in order (docs/decisions/0006-engine-runtime.md).
 *
 * Owns: the consumers (OrderedReader: one subject in stream order from a sequence the reader owns;
 * PartitionSource: one owned TM_EVENTS partition, decoded), the deterministic partition interleave that
 * orders the owned partitions' items by log time (partition-interleave.ts), the bound on queued input
 * (LaneIntake), each operator's input as the host pulls it (PartitionInput: a worker's partitions
 * through the interleave; PartialsInput: a merge operator's TM_PARTIALS subject, one message at a
 * time), and owned-partition lists.
 *
 * May import: protocol, the runtime root (errors). Nothing else of the runtime: it knows no sink,
 * no checkpoint, no clock.
 *
 * Invariants: every message of a subject is handed on once, in stream order, per incarnation of its
 * reader, resuming at the checkpointed sequence + 1; the interleave's release order does not depend on
 * when messages arrive (a replay releases the same sequence); a lane the interleave waits on is never
 * held by the input bound, so the bound cannot deadlock the interleave.
 */
export { OrderedReader, type OrderedReaderHandlers } from "./ordered-reader.js";
export { PartitionSource, type PartitionSourceHandlers } from "./partition-source.js";
export { PartitionInterleave, type LaneOffset, type InterleaveSink } from "./partition-interleave.js";
export { LaneIntake, MAX_QUEUED_MESSAGES } from "./lane-intake.js";
export { PartitionInput, type InterleaveBatch } from "./partition-input.js";
export { PartialsInput } from "./partials-input.js";
export { formatPartitionList, parsePartitionList } from "./partition-list.js";
