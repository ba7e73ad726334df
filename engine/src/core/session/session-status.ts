/** The session operator's status: CoreStatus (so drivers read it alike) plus session counters. */
import { watermarkOf } from "../clock-state.js";
import { dialStatus } from "../dial-status.js";
import type { PolicyDial } from "../policy-dial.js";
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "../status-parts.js";
import type { CoreConfig, CoreStatus } from "../types.js";
import { referenceIndex, type SessionState } from "./session-state.js";

export interface SessionStatus extends CoreStatus {
  /** Open sessions summed over the policies (openWindows also counts the bias reference's). */
  openSessions: number;
  /** Open sessions of the hidden bias reference (kept to the reference horizon). */
  referenceSessions: number;
  /** Merges of two or more sessions by a bridging event, summed over policies. */
  merges: number;
  /** Events without a user: they belong to no session. */
  anonymousEvents: number;
}

/** Rough heap cost of one open session and one key (object headers, fields, list slots). */
const SESSION_BYTES = 160;
const KEY_BYTES = 120;

export function sessionStatus(config: CoreConfig, state: SessionState): SessionStatus {
  const clock = state.clock;
  const ref = referenceIndex(state);
  const open = state.openSessions;
  let reference = 0;
  for (const users of state.keys.values()) for (const k of users.values()) reference += k.open[ref] as number;
  return {
    logTime: orNull(clock.logTime),
    partitions: partitionStatuses(clock, config.idleTimeoutMs),
    policies: clock.policies
      .slice(0, ref)
      .map((p) => policyStatus(p, watermarkOf(clock, p), dialStatus(p, [state.bias.dials[p.index] as PolicyDial]))),
    openWindows: open,
    stateKeys: state.keyCount,
    stateBytes: open * SESSION_BYTES + state.keyCount * KEY_BYTES,
    overflow: { services: state.services.overflow.services, routes: 0 },
    eventsTotal: clock.eventsTotal,
    heldBackBy: heldBackBy(clock, config.idleTimeoutMs),
    openSessions: open - reference,
    referenceSessions: reference,
    merges: state.merges,
    anonymousEvents: state.anonymous,
  };
}
