/** The session operator's status: CoreStatus (so drivers read it alike) plus the session store's counters. */
import { watermarkOf } from "../watermarks/clock-state.js";
import { dialStatus } from "../dial/dial-status.js";
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "../status-parts.js";
import type { CoreConfig, CoreStatus } from "../types.js";
import { bit } from "./session-context.js";
import { referenceIndex, type SessionState } from "./session-state.js";

export interface SessionStatus extends CoreStatus {
  /** Open sessions summed over the configured policies (a row several policies hold counts for each). */
  openSessions: number;
  /** Open sessions of the hidden bias reference (kept to the reference horizon). */
  referenceSessions: number;
  /** Session rows held (each shared by the policies that see the same session). */
  sessionRows: number;
  /** (service, user) keys held, and the cap on them (`sessions.maxKeys`). */
  sessionKeys: number;
  maxSessionKeys: number;
  /** Bytes of the session store's typed arrays and timer queues, exactly (capacity included). */
  sessionStoreBytes: number;
  /** Events of new keys past the cap: counted, not sessionized. */
  overflowEvents: number;
  /** Joins of two or more sessions by a bridging event, summed over policies. */
  joins: number;
  /** Events without a user: they belong to no session. */
  anonymousEvents: number;
}

/** Bytes a held key costs on the JS heap: its user string and its slot in the array of them (measured, engine/BENCHMARKS.md). */
const KEY_HEAP_BYTES = 44;

function popcount(x: number): number {
  let n = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) n++;
  return n;
}

/** `timerBytes`: the operator's timer queues (not part of its state). */
export function sessionStatus(config: CoreConfig, state: SessionState, timerBytes: number): SessionStatus {
  const clock = state.clock;
  const ref = referenceIndex(state);
  const { slots, keys } = state;
  let open = 0;
  let reference = 0;
  const refBit = bit(ref);
  for (let s = 0; s < slots.top; s++) {
    const mask = slots.mask[s] as number;
    if (mask === 0) continue;
    if (mask & refBit) reference++;
    open += popcount(mask & ~refBit);
  }
  let cells = 0;
  for (const windows of state.windows) for (const w of windows.values()) cells += w.services.size;
  return {
    logTime: orNull(clock.logTime),
    partitions: partitionStatuses(clock, config.idleTimeoutMs),
    policies: clock.policies
      .slice(0, ref)
      .map((p) => policyStatus(p, watermarkOf(clock, p), dialStatus(p, state.dials.dials[p.index] ?? []))),
    openWindows: cells,
    stateKeys: keys.live,
    stateBytes: slots.bytes + keys.bytes + timerBytes + keys.live * KEY_HEAP_BYTES,
    overflow: { services: state.services.overflow.services, routes: 0 },
    eventsTotal: clock.eventsTotal,
    heldBackBy: heldBackBy(clock, config.idleTimeoutMs),
    openSessions: open,
    referenceSessions: reference,
    sessionRows: slots.live,
    sessionKeys: keys.live,
    maxSessionKeys: keys.maxKeys,
    sessionStoreBytes: slots.bytes + keys.bytes + timerBytes,
    overflowEvents: state.overflowEvents,
    joins: state.joins,
    anonymousEvents: state.anonymous,
  };
}
