/**
 * Everything the session operator holds, as one type (docs/decisions/0010-core-state-and-idleness.md):
 * the input clock (log time, partitions, the policies' progress with the hidden bias reference
 * last), the service registry (service cap), every (service, user) key with its lanes of sessions
 * shared by policies (docs/decisions/0018-shared-sessions.md) and closed-session bounds, the pane
 * sequence counters, the early queues and the bias windows. `status()` and the snapshot codec read
 * it; restoring decodes one and builds the operator around it. Timer queues are derived from it.
 */
import { newClockState, type ClockState } from "../clock-state.js";
import { KeyRegistry } from "../key-registry.js";
import type { CoreConfig, PolicyConfig } from "../types.js";
import { SessionBias } from "./session-bias.js";
import type { SessionConfig } from "./session-config.js";
import { keyIdOf } from "../window-state.js";
import { newKeyState, type KeyState, type Session } from "./session-key.js";

export interface SessionState {
  /** Policies are the configured ones, then the reference (index = configured count). */
  readonly clock: ClockState;
  /** Services that keep their name under the service cap (routes are not keyed here). */
  readonly services: KeyRegistry;
  /** service → user → key. */
  readonly keys: Map<string, Map<string, KeyState>>;
  /** The service of the last lookup and its users (its entry in `keys`, or undefined once deleted). */
  lastService: string;
  lastUsers: Map<string, KeyState> | undefined;
  /** Number of keys in `keys`. */
  keyCount: number;
  /** Open sessions (policy views) over all policies, the reference's included. */
  openSessions: number;
  /** Per policy: the next pane seq. */
  readonly seqs: number[];
  /** Per policy: sessions changed since its last early tick, in order (dead ones skipped). */
  readonly early: Session[][];
  /** Events without a user: no session. */
  anonymous: number;
  /** Merges of two or more sessions by a bridging event, over the configured policies. */
  merges: number;
  /** Next key or session id (one sequence, monotone). */
  nextId: number;
  readonly bias: SessionBias;
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

export function newSessionState(config: CoreConfig, sessions: Readonly<SessionConfig>): SessionState {
  const clock = newClockState(config, [...config.policies, referencePolicy(config)]);
  return {
    clock,
    services: new KeyRegistry(config.serviceCap, config.routeCapPerService),
    keys: new Map(),
    lastService: "",
    lastUsers: undefined,
    keyCount: 0,
    openSessions: 0,
    seqs: clock.policies.map(() => 0),
    early: clock.policies.map(() => []),
    anonymous: 0,
    merges: 0,
    nextId: 1,
    bias: new SessionBias(sessions.metricsWindowMs, clock.policies.length, config.biasWindows, config.serviceCap),
  };
}

/** Index of the hidden reference policy (= the number of configured policies). */
export function referenceIndex(state: SessionState): number {
  return state.clock.policies.length - 1;
}

/** The (service, user) key's state, created (with the next id) on first use. */
export function keyOf(state: SessionState, service: string, user: string): KeyState {
  // Consecutive events often share a service (a batch is per partition): one lookup saved.
  let users =
    state.lastUsers !== undefined && state.lastService === service ? state.lastUsers : state.keys.get(service);
  if (users === undefined) state.keys.set(service, (users = new Map()));
  state.lastService = service;
  state.lastUsers = users;
  let k = users.get(user);
  if (k === undefined) {
    k = newKeyState(state.nextId++, service, user, keyIdOf(service, user), state.clock.policies.length);
    users.set(user, k);
    state.keyCount++;
  }
  return k;
}

/** Forgets a key with nothing left (no open session, no closed-session bound). */
export function dropKey(state: SessionState, k: KeyState): void {
  k.live = false;
  state.keyCount--;
  const users = state.keys.get(k.service);
  users?.delete(k.user);
  if (users?.size === 0) {
    state.keys.delete(k.service);
    if (state.lastService === k.service) state.lastUsers = undefined;
  }
}
