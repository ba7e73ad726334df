/** The session operator's status: CoreStatus (so drivers read it alike) plus session counters. */
import { describeStrategy } from "../watermark.js";
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
  const orNull = (v: number): number | null => (Number.isFinite(v) ? v : null);
  const open = op.sessionsById.size;
  let reference = 0;
  for (const users of op.keys.values()) for (const k of users.values()) reference += (k.sessions[op.P] as unknown[]).length;
  let heldBackBy: number | null = null;
  let min = Infinity;
  op.parts.forEach((p, i) => {
    const t = p.spoken ? p.logTime : -Infinity;
    if (!p.idle && (heldBackBy === null || t < min)) {
      heldBackBy = i;
      min = t;
    }
  });
  return {
    logTime: orNull(op.logTime),
    partitions: op.parts.map((p, partition) => ({ partition, logTime: orNull(p.logTime), idle: p.idle })),
    policies: op.pols.slice(0, op.P).map((p) => ({
      name: p.cfg.name,
      label: p.cfg.label,
      strategy: describeStrategy(p.cfg.watermark),
      graceMs: p.cfg.graceMs,
      mode: p.cfg.mode,
      watermark: orNull(op.watermarkOf(p)),
      lateAccepted: p.lateAccepted,
      dropped: p.dropped,
      bias: p.bias.current(),
      emitDelayMs: p.emitDelayCount === 0 ? null : p.emitDelaySum / p.emitDelayCount,
    })),
    openWindows: open,
    stateKeys: op.keysById.size,
    stateBytes: open * SESSION_BYTES + op.keysById.size * KEY_BYTES,
    routesOverflowed: 0,
    eventsTotal: op.eventsTotal,
    heldBackBy,
    openSessions: open - reference,
    referenceSessions: reference,
    merges: op.merges,
    anonymousEvents: op.anonymous,
  };
}
