/**
 * runtime/status — what an operator tells of itself (docs/operations.md, "Metrics" and "Engine
 * status").
 *
 * Owns: the `tm.status` message (status-message.ts, status-services.ts), /metrics (EngineMetrics,
 * backpressure and session gauges), pipeline lag, the held-input log (HoldWatch, HoldLog) and the
 * stall watch that names a partition the interleave has waited on for long (stall-watch.ts). The role
 * publishers that assemble these live with their roles (worker/worker-status.ts,
 * merge/merge-status.ts).
 *
 * May import: core/ (types), protocol, input/ and output/ (what they report), the runtime root.
 *
 * Invariants: nothing here decides a result. Wall clock is read only for what is reported (lag,
 * stalls, holds), never for what the engine computes; reports that would repeat every turn are
 * paced.
 */
export { EngineMetrics, type EngineMetricsView } from "./engine-metrics.js";
export { registerBackpressureMetrics } from "./backpressure-metrics.js";
export { backpressureStatus, type BackpressureSource } from "./backpressure-status.js";
export { PipelineLag, type LagPercentiles } from "./pipeline-lag.js";
export { buildStatusMessage, type StatusInputs } from "./status-message.js";
export { HoldLog } from "./hold-log.js";
export { HoldWatch } from "./hold-watch.js";
export { HOLD_MS, STALL_MS, StallWatch } from "./stall-watch.js";
