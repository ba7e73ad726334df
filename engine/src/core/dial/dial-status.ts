/**
 * The measured dial in `status()` (docs/semantics.md, "Measured bias"): per policy, the pooled
 * bias of every pane kind it emitted at (`stages` on the wire), per window size, with the kind's mean emit delay (the
 * frontier's points), and per service its on-time and final bias with its lateness correlation.
 * A final-only policy's on-time is its final. Services listed (by name): those measured in the last
 * biasWindows windows of the size (at most the service cap).
 */
import type { LatenessCorrelation, PaneBias, ServiceDial, StageBias } from "../../protocol.js";
import { NO_LATENESS } from "./lateness.js";
import { biasFor, emitDelayOf, pooledBias, type PolicyDial } from "./policy-dial.js";
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { ageOfSlot, SLOT_FINAL, SLOT_ON_TIME, SLOTS, kindOfSlot } from "../panes/kind-slot.js";

/** What status() says of one policy's dial. */
export interface PolicyDialStatus {
  bias: PaneBias;
  stages: StageBias[];
  services: ServiceDial[];
}

/** `dials`: the policy's dial per window config, the smallest size first. */
export function dialStatus(p: PolicyState, dials: readonly PolicyDial[]): PolicyDialStatus {
  return {
    bias: pooledBias(dials[0] as PolicyDial, SLOT_FINAL),
    stages: dials.flatMap((d) => stagesOf(d)),
    services: dials.flatMap((d) => servicesOf(p, d, dials[0] as PolicyDial)),
  };
}

/** Every slot the policy emitted at (early by age, on-time, late, final). */
function stagesOf(dial: PolicyDial): StageBias[] {
  const out: StageBias[] = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    if ((dial.emitDelayCount[slot] as number) === 0 && dial.pooled[slot] === undefined) continue;
    const bias = pooledBias(dial, slot);
    const age = ageOfSlot(slot);
    const stage = kindOfSlot(slot);
    const emitDelayMs = emitDelayOf(dial, slot);
    out.push(
      age === undefined
        ? { windowMs: dial.windowMs, stage, bias, emitDelayMs }
        : { windowMs: dial.windowMs, stage, age, bias, emitDelayMs },
    );
  }
  return out;
}

/** `lateness`: the dial of the smallest size, which holds the services' lateness correlations. */
function servicesOf(p: PolicyState, dial: PolicyDial, lateness: PolicyDial): ServiceDial[] {
  const out: ServiceDial[] = [];
  const onTimeSlot = emitsOnTime(p) ? SLOT_ON_TIME : SLOT_FINAL;
  for (const [service, s] of dial.services) {
    if (dial.closedWindows - s.seenWindow >= dial.size) continue;
    out.push(serviceDial(dial, service, onTimeSlot, lateness));
  }
  // Before the first measured window: the services with provisional figures.
  for (const service of dial.provisional?.services.keys() ?? [])
    if (!dial.services.has(service)) out.push(serviceDial(dial, service, onTimeSlot, lateness));
  return out.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
}

function serviceDial(dial: PolicyDial, service: string, onTimeSlot: number, lateness: PolicyDial): ServiceDial {
  return {
    service,
    windowMs: dial.windowMs,
    onTime: biasFor(dial, service, onTimeSlot),
    final: biasFor(dial, service, SLOT_FINAL),
    lateness: latenessOf(lateness, service),
  };
}

function latenessOf(dial: PolicyDial, service: string): LatenessCorrelation {
  return dial.services.get(service)?.lateness?.correlation() ?? NO_LATENESS;
}
