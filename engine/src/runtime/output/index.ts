/**
 * runtime/output — publishing what the core emits (docs/decisions/0012-batched-transport.md,
 * docs/decisions/0035-backpressure.md).
 *
 * Owns: EmitGroups (what the core emits for one input message, as one message per subject with
 * deterministic ids) and LaneGroups, the body buffers and their sender, the idempotent sinks
 * (PaneSink, PaneThreadSink and its publisher thread, SerialPublisher for TM_PARTIALS) with their
 * publish windows, resends and backoff, and the OutputGate with the InputHold it measures.
 *
 * May import: core/ (types), nats/, protocol. Nothing else of the runtime.
 *
 * Invariants: sinks are idempotent on the message id (`Nats-Msg-Id`): a resend or a replay of the
 * same group carries the same ids; what is in flight is bounded in messages and bytes, and past the
 * bound the gate holds the input rather than memory growing.
 */
export { EmitGroup, type EmitGroupState, type GroupMessage, MIN_MAX_PAYLOAD } from "./emit-group.js";
export { LaneGroups } from "./lane-groups.js";
export { BodyBuffers } from "./body-buffers.js";
export { bodySender, type BodySink } from "./body-sender.js";
export { PaneSink, type PublishStats } from "./pane-sink.js";
export type { OperatorSink } from "./operator-sink.js";
export { PaneThreadSink } from "./pane-thread-sink.js";
export { SerialPublisher } from "./serial-publisher.js";
export { OutputGate, type GatedOutput } from "./output-gate.js";
export { InputHold, type HoldCause } from "./input-hold.js";
export { ReportPace } from "./report-pace.js";
