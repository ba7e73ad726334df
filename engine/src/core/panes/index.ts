/**
 * core/panes — policies as schedules of snapshots, triggers and panes (docs/semantics.md,
 * "Policies are snapshot schedules" and "Panes").
 *
 * Owns: each policy's progress (PolicyState), the triggers (early ticks, on-time, late, final,
 * the reference's close), turning a policy's snapshot of a window into panes per accumulation mode
 * (accumulating, discarding, retracting), and what a policy showed of a window at each pane kind
 * and age (kind-points.ts, kind-slot.ts: the points bias is measured at; the wire names the kind
 * `stage` (`bias.stage`), docs/architecture.md, "Glossary").
 *
 * May import: protocol, core/windows/, core/watermarks/, core/dial/ (the bias a pane carries). No
 * I/O, no clock, no env.
 *
 * Invariants: a pane's id is `<policy>|<key>|<windowSize>|<start>` and its seq grows by one per
 * emission, so a sink idempotent on (id, seq) takes a replay as a no-op; a retracting policy emits
 * the retraction of its previous value before the new one; after its final pane a policy forgets
 * the window.
 */
export { emitWindow } from "./pane-emitter.js";
export { newPolicyState, policyStates, type PolicyState } from "./policy-state.js";
export { acceptLate, earlyTick, finalPane, lateFlush, onTime, referenceClose } from "./triggers.js";
export type { TriggerContext } from "./trigger-context.js";
