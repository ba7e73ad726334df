/** The session operator's status: CoreStatus (so drivers read it alike) plus session counters. */
import { heldBackBy, orNull, partitionStatuses, policyStatus } from "../status-parts.js";
import type { CoreStatus } from "../types.js";
import type { SessionOperator } from "./session-operator.js";

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

export function sessionStatus(op: SessionOperator): SessionStatus {
  const open = op.sessionsById.size;
  let reference = 0;
  for (const users of op.keys.values())
    for (const k of users.values()) reference += (k.sessions[op.P] as unknown[]).length;
  return {
    logTime: orNull(op.logTime),
    partitions: partitionStatuses(op.parts),
    policies: op.pols.slice(0, op.P).map((p) => policyStatus(p, op.watermarkOf(p))),
    openWindows: open,
    stateKeys: op.keysById.size,
    stateBytes: open * SESSION_BYTES + op.keysById.size * KEY_BYTES,
    routesOverflowed: 0,
    eventsTotal: op.eventsTotal,
    heldBackBy: heldBackBy(op.parts),
    openSessions: open - reference,
    referenceSessions: reference,
    merges: op.merges,
    anonymousEvents: op.anonymous,
  };
}
