/**
 * One policy's measured dial for one window size (docs/semantics.md, "Measured bias"): per kind
 * slot the pooled bias over services (the frontier's points) with the kind's emit delay, and per
 * service its own bias per slot. Bounded: a service unseen for keyTtl is forgotten with the key
 * registry's sweep, and at most serviceCap + 1 services (with "(other)") are kept.
 */
import type { PaneBias } from "../../protocol.js";
import { BiasTracker, unmeasured, type BiasLabel } from "./bias.js";
import type { LatenessWindow } from "./lateness.js";
import { UNMEASURED_ERROR, type NowcastError } from "./nowcast.js";
import { LABELS, SLOT_FINAL, SLOT_LATE, SLOTS } from "../panes/kind-slot.js";

/** One service's trackers under a policy and window size. */
export interface ServiceKinds {
  /** Per slot (created with its first sample). */
  readonly bias: (BiasTracker | undefined)[];
  /** Per slot: the error of the nowcasts published there (nowcast − reference). */
  readonly nowcastError: (BiasTracker | undefined)[];
  /** Log time of its last sample. */
  lastSeen: number;
  /** The dial's `closedWindows` at its last sample (status lists services seen in the last N windows). */
  seenWindow: number;
  /** Smallest window size only: late vs on-time events and errors (docs/semantics.md, "Correlated lateness"). */
  lateness: LatenessWindow | null;
}

/**
 * Provisional trackers (provisional.ts) of one policy and window size, per slot pooled and per
 * service; kept only until the reference closes the first window of the size.
 */
export interface ProvisionalDial {
  readonly pooled: (BiasTracker | undefined)[];
  readonly services: Map<string, (BiasTracker | undefined)[]>;
}

export function newProvisionalDial(): ProvisionalDial {
  return { pooled: new Array<BiasTracker | undefined>(SLOTS).fill(undefined), services: new Map() };
}

export interface PolicyDial {
  readonly windowMs: number;
  /** biasWindows: samples kept per tracker. */
  readonly size: number;
  /** At most this many services (the service cap, plus "(other)"). */
  readonly serviceCap: number;
  /** Per slot: bias summed over services (created with its first sample). */
  readonly pooled: (BiasTracker | undefined)[];
  /** Per slot: the nowcasts' error summed over services. */
  readonly pooledNowcastError: (BiasTracker | undefined)[];
  /** Per slot: emit delays of the policy's emissions there (log time − window end). */
  readonly emitDelaySum: Float64Array;
  readonly emitDelayCount: Float64Array;
  readonly services: Map<string, ServiceKinds>;
  /** Windows measured against the reference so far. */
  closedWindows: number;
  /** Until the first window is measured: lower bounds against what the reference holds so far. */
  provisional: ProvisionalDial | null;
}

export function newPolicyDial(windowMs: number, biasWindows: number, serviceCap: number): PolicyDial {
  return {
    windowMs,
    size: biasWindows,
    serviceCap: serviceCap + 1,
    pooled: new Array<BiasTracker | undefined>(SLOTS).fill(undefined),
    pooledNowcastError: new Array<BiasTracker | undefined>(SLOTS).fill(undefined),
    emitDelaySum: new Float64Array(SLOTS),
    emitDelayCount: new Float64Array(SLOTS),
    services: new Map(),
    closedWindows: 0,
    provisional: newProvisionalDial(),
  };
}

export function newServiceKinds(): ServiceKinds {
  return {
    bias: new Array<BiasTracker | undefined>(SLOTS).fill(undefined),
    nowcastError: new Array<BiasTracker | undefined>(SLOTS).fill(undefined),
    lastSeen: -Infinity,
    seenWindow: 0,
    lateness: null,
  };
}

/** The service's trackers, created on first use; past the cap the least recently seen is forgotten. */
export function serviceKinds(dial: PolicyDial, service: string): ServiceKinds {
  let s = dial.services.get(service);
  if (s !== undefined) return s;
  if (dial.services.size >= dial.serviceCap) evictOldest(dial);
  dial.services.set(service, (s = newServiceKinds()));
  return s;
}

function evictOldest(dial: PolicyDial): void {
  let oldest: string | undefined;
  let at = Infinity;
  for (const [service, s] of dial.services)
    if (s.lastSeen < at) {
      at = s.lastSeen;
      oldest = service;
    }
  if (oldest !== undefined) dial.services.delete(oldest);
}

/** The tracker of `slot` in `trackers` (a service's or the pooled ones), created on first use. */
export function trackerOf(
  dial: PolicyDial,
  trackers: (BiasTracker | undefined)[],
  slot: number,
  scope: "service" | "policy",
): BiasTracker {
  return (trackers[slot] ??= new BiasTracker(dial.size, LABELS[scope][slot] as BiasLabel));
}

/** Forgets services last sampled before `cutoff` (log time). */
export function sweepDial(dial: PolicyDial, cutoff: number): void {
  for (const [service, s] of dial.services) if (s.lastSeen < cutoff) dial.services.delete(service);
}

const UNMEASURED: readonly PaneBias[] = Array.from({ length: SLOTS }, (_, slot) =>
  unmeasured(LABELS.policy[slot] as (typeof LABELS.policy)[number]),
);

/** The service's own measurement of the slot, else the pooled one, else null. */
function measured(dial: PolicyDial, service: string | null, slot: number): PaneBias | null {
  const own = service === null ? undefined : dial.services.get(service)?.bias[slot];
  if (own !== undefined && own.windows > 0) return own.current();
  const pooled = dial.pooled[slot];
  return pooled !== undefined && pooled.windows > 0 ? pooled.current() : null;
}

/** The service's provisional figure of the slot, else the pooled provisional one, else null. */
function provisional(dial: PolicyDial, service: string | null, slot: number): PaneBias | null {
  const prov = dial.provisional;
  if (prov === null) return null;
  const own = service === null ? undefined : prov.services.get(service)?.[slot];
  if (own !== undefined && own.windows > 0) return own.current();
  const pooled = prov.pooled[slot];
  return pooled !== undefined && pooled.windows > 0 ? pooled.current() : null;
}

/**
 * The bias a pane of `service` at `slot` carries (docs/semantics.md, "Measured bias"): its
 * service's, else the pooled one of the slot (scope "policy"); a late pane without a late
 * measurement carries the final one; before any reference close the provisional figure in the
 * same order; unmeasured (windows 0) when nothing is. `service` null: the pooled figures only.
 */
export function biasFor(dial: PolicyDial, service: string | null, slot: number): PaneBias {
  for (const source of [measured, provisional]) {
    const b = source(dial, service, slot) ?? (slot === SLOT_LATE ? source(dial, service, SLOT_FINAL) : null);
    if (b !== null) return b;
  }
  return UNMEASURED[slot] as PaneBias;
}

/**
 * The measured error of the nowcasts of `service` at `slot` (the pane's own kind and age), else
 * of the slot pooled over services, else unmeasured.
 */
export function nowcastErrorFor(dial: PolicyDial, service: string, slot: number): NowcastError {
  const own = dial.services.get(service)?.nowcastError[slot];
  if (own !== undefined && own.windows > 0) return own.summary();
  const pooled = dial.pooledNowcastError[slot];
  return pooled !== undefined && pooled.windows > 0 ? pooled.summary() : UNMEASURED_ERROR;
}

/** The pooled bias of the slot alone (no fallback to another kind, provisional before any close): the frontier's point. */
export function pooledBias(dial: PolicyDial, slot: number): PaneBias {
  return measured(dial, null, slot) ?? provisional(dial, null, slot) ?? (UNMEASURED[slot] as PaneBias);
}

/** Mean emit delay of the policy's emissions at the slot, ms (null: none yet). */
export function emitDelayOf(dial: PolicyDial, slot: number): number | null {
  const n = dial.emitDelayCount[slot] as number;
  return n === 0 ? null : (dial.emitDelaySum[slot] as number) / n;
}
