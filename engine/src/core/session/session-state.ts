/**
 * Everything the session operator holds, as one type (docs/decisions/0034-sessions-at-scale.md):
 * the input clock (log time, partitions, the policies' progress with the hidden bias reference
 * last), the service registry (service cap), the session store (rows and keys), the cells per
 * window size with each policy's early queue, the dials, and counters. `status()` and the snapshot
 * codec read it; restoring decodes one and builds the operator around it. Timer queues are derived
 * from it.
 */
import { newClockState, type ClockState } from "../watermarks/clock-state.js";
import { KeyRegistry } from "../windows/key-registry.js";
import type { CoreConfig, PolicyConfig } from "../types.js";
import type { CellWindow, SessionCell } from "./cell-window.js";
import { SessionDials } from "./session-bias.js";
import type { SessionConfig } from "./session-config.js";
import { SessionKeys } from "./session-keys.js";
import { SessionSlots } from "./session-slots.js";

export interface SessionState {
  /** Policies are the configured ones, then the reference (index = configured count). */
  readonly clock: ClockState;
  /** Services that keep their name under the service cap. */
  readonly services: KeyRegistry;
  readonly slots: SessionSlots;
  readonly keys: SessionKeys;
  /** Cell window sizes (ms): the tumbling windows of the core config, ascending. */
  readonly sizes: readonly number[];
  /** Per window size: start → its cells. */
  readonly windows: Map<number, CellWindow>[];
  /** Per configured policy: cells changed since its last early tick, in order. */
  readonly early: SessionCell[][];
  readonly dials: SessionDials;
  /** Events without a user: no session. */
  anonymous: number;
  /** Events of (service, user) keys past the key cap: not sessionized. */
  overflowEvents: number;
  /** Joins of two or more sessions by a bridging event, over the configured policies. */
  joins: number;
}

/** The bias reference as a hidden last policy: every event kept to the reference horizon, no panes. */
export function referencePolicy(config: CoreConfig): PolicyConfig {
  return {
    name: "(reference)",
    label: "reference",
    watermark: { kind: "arrival-lag", lagMs: config.referenceHorizonMs },
    graceMs: 0,
    earlyEveryMs: null,
    lateEveryMs: null,
    mode: "final-only",
  };
}

/** The tumbling window sizes of the config (a sliding window's cells are not kept), ascending, distinct. */
export function cellSizes(config: CoreConfig): number[] {
  const sizes = new Set<number>();
  for (const w of config.windows) if (w.kind === "tumbling") sizes.add(w.sizeMs);
  return [...sizes].sort((a, b) => a - b);
}

/** Timer clocks: 0 is log time; each event-time policy has its own (its W). */
export function clockCount(clock: ClockState): number {
  return 1 + clock.policies.filter((p) => p.eventTime).length;
}

export function newSessionState(config: CoreConfig, sessions: Readonly<SessionConfig>): SessionState {
  const clock = newClockState(config, [...config.policies, referencePolicy(config)]);
  const sizes = cellSizes(config);
  return {
    clock,
    services: new KeyRegistry(config.serviceCap, config.routeCapPerService),
    slots: new SessionSlots(clockCount(clock)),
    keys: new SessionKeys(clock.policies.length, sessions.maxKeys),
    sizes,
    windows: sizes.map(() => new Map()),
    early: config.policies.map(() => []),
    dials: new SessionDials(sizes, config.policies.length, config.biasWindows, config.serviceCap),
    anonymous: 0,
    overflowEvents: 0,
    joins: 0,
  };
}

/** Index of the hidden reference policy (= the number of configured policies). */
export function referenceIndex(state: SessionState): number {
  return state.clock.policies.length - 1;
}
