/**
 * runtime/host — the OperatorHost and the role lifecycle around it (docs/architecture.md,
 * "The engine's folders"; docs/decisions/0045-operator-host.md).
 *
 * Owns: running one operator (operator.ts is the contract, operator-host.ts the host): its input
 * loop over the operator's InputSource (input-loop.ts, input-source.ts), the cut of its checkpoints
 * — when (its trigger, asked between batches) and the sequence: hold, capture, release, encode,
 * persist after the acks, report (host-checkpoints.ts) — its output
 * (EmitGroup bodies to the pane sink, compressed or not), the OutputGate that holds its input while
 * an output is saturated, pane counts and pipeline lag, its backpressure report, the stop with its
 * final checkpoint, the NATS connection's comings and goings, restoring the operator it builds (the
 * restore step's state handed to its `restore` before anything runs it); connecting a role and
 * taking its restore step (engine-connect.ts, role-start.ts), opening its pane sink (open-sink.ts), its status publisher's
 * timer and publish (role-status.ts), running it, following the connection and closing
 * (role-lifecycle.ts).
 *
 * May import: input/, output/, checkpoint/, status/, config/, the runtime root (errors, operator
 * log), core/, nats/, protocol. Never worker/ or merge/: operators plug into the host, not the
 * other way round.
 *
 * Invariants: a checkpoint is cut only between two batches (or when the operator hands one over,
 * between two of its messages), no input is pulled from the cut until its state is captured, and
 * it is written only once everything published before it is acknowledged; the final one within one
 * deadline, else none (the log replays). Every operator's panes are
 * counted, gated and flushed by the same code; the operator only emits them into its groups.
 */
export { OperatorHost, type HostOptions, type StateOf } from "./operator-host.js";
export type { CheckpointWaiting, HostContext, Operator, OperatorCheckpoint, OperatorOutput } from "./operator.js";
export type { InputSource } from "./input-source.js";
export { HostCheckpoints } from "./host-checkpoints.js";
export { InputLoop } from "./input-loop.js";
export { RoleStatusPublisher, type LaneStatus, type StatusConfig } from "./role-status.js";
export { PaneCounts } from "./pane-counts.js";
export { paneSink, type SinkConfig } from "./open-sink.js";
export { closeRole, followConnection, runRole, type RoleStatus, type RunningRole } from "./role-lifecycle.js";
export { checkRetention, connectEngine } from "./engine-connect.js";
export { connectAndRestore, type StartedRole } from "./role-start.js";
