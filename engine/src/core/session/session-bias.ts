/**
 * Measured bias of session results (docs/semantics.md, "Measured bias", applied to sessions;
 * docs/decisions/0009): a hidden reference sessionizer keeps every event to the reference horizon.
 * Each session counts in the metrics window holding its end, per service and per policy
 * (reference last), twice: when the policy closes it (final) and when it emits its on-time pane
 * (on-time, at its end then). When the reference has closed a window, each policy's sessions and
 * error sessions there at each stage are compared with the reference's — count shortfall %,
 * error-session share difference in pp; p99Pct and usersPct are null, as sessions carry neither —
 * per service and pooled over services, into the policy's dial (policy-dial.ts), so session panes
 * carry their own service's and stage's bias like window panes.
 */
import type { PaneBias } from "../../protocol.js";
import { PooledSum, unmeasured, type BiasPoint } from "../bias.js";
import type { ByteReader, ByteWriter } from "../byte-codec.js";
import { readPolicyDial, writePolicyDial } from "../dial-snapshot.js";
import { biasFor, newPolicyDial, serviceStages, sweepDial, trackerOf, type PolicyDial } from "../policy-dial.js";
import { emitsOnTime, type PolicyState } from "../policy-state.js";
import { SLOT_FINAL, SLOT_ON_TIME } from "../stage-slot.js";
import { compareOne } from "../window-measure.js";

/** Per policy in a window's counts: final sessions, final error sessions, on-time sessions, on-time error sessions. */
const PER_POLICY = 4;

/** Early session panes are not measured (a session has no age): their bias says so. */
const EARLY: PaneBias = unmeasured({ stage: "early", scope: "policy", provisional: false });

export class SessionBias {
  /** Window start → service → counts per policy index (reference last). */
  readonly windows = new Map<number, Map<string, Float64Array>>();
  /** End of the latest window compared: closes into it come too late and are ignored. */
  comparedUntil = -Infinity;
  /** Per configured policy: its measured dial over metrics windows. */
  readonly dials: PolicyDial[];

  constructor(
    readonly windowMs: number,
    /** Policies including the reference (its index is slots − 1). */
    readonly slots: number,
    biasWindows: number,
    serviceCap: number,
  ) {
    this.dials = Array.from({ length: slots - 1 }, () => {
      const dial = newPolicyDial(windowMs, biasWindows, serviceCap);
      dial.provisional = null;
      return dial;
    });
  }

  /**
   * Counts a session at `slot` (SLOT_FINAL: closed, SLOT_ON_TIME: its on-time pane) in the window
   * holding `end`; returns the window start when the window is new (to schedule its compare).
   */
  record(policy: number, service: string, end: number, error: boolean, slot: number): number | null {
    const start = Math.floor(end / this.windowMs) * this.windowMs;
    if (start + this.windowMs <= this.comparedUntil) return null;
    let services = this.windows.get(start);
    const fresh = services === undefined;
    if (services === undefined) this.windows.set(start, (services = new Map()));
    let v = services.get(service);
    if (v === undefined) services.set(service, (v = new Float64Array(PER_POLICY * this.slots)));
    const at = PER_POLICY * policy + (slot === SLOT_ON_TIME ? 2 : 0);
    v[at] = (v[at] as number) + 1;
    if (error) v[at + 1] = (v[at + 1] as number) + 1;
    return fresh ? start : null;
  }

  /** Records a pane's emit delay at its stage slot. */
  emitted(policy: number, slot: number, delayMs: number): void {
    const dial = this.dials[policy];
    if (dial === undefined) return;
    dial.emitDelaySum[slot] = (dial.emitDelaySum[slot] as number) + delayMs;
    dial.emitDelayCount[slot] = (dial.emitDelayCount[slot] as number) + 1;
  }

  /** The bias a session pane of the policy carries at `slot` (-1: an early pane). */
  biasOf(policy: number, service: string, slot: number): PaneBias {
    const dial = this.dials[policy];
    return slot < 0 || dial === undefined ? EARLY : biasFor(dial, service, slot);
  }

  /**
   * Compares the window for every policy that has closed it (`closed(p)`), then forgets it.
   * A window the reference saw no session end in yields no sample.
   */
  compare(start: number, policies: readonly PolicyState[], closed: (p: PolicyState) => boolean, logTime: number): void {
    const services = this.windows.get(start);
    this.windows.delete(start);
    this.comparedUntil = Math.max(this.comparedUntil, start + this.windowMs);
    if (services === undefined) return;
    const reference = this.slots - 1;
    let total = 0;
    for (const v of services.values()) total += v[PER_POLICY * reference] as number;
    if (total === 0) return;
    for (const p of policies) {
      if (p.index === reference || !closed(p)) continue;
      const dial = this.dials[p.index] as PolicyDial;
      dial.closedWindows++;
      this.measure(dial, services, p.index, 0, SLOT_FINAL, logTime);
      if (emitsOnTime(p)) this.measure(dial, services, p.index, 2, SLOT_ON_TIME, logTime);
    }
  }

  /** One stage of one policy: per service (where the reference saw sessions end) and pooled. */
  private measure(
    dial: PolicyDial,
    services: ReadonlyMap<string, Float64Array>,
    policy: number,
    offset: number,
    slot: number,
    logTime: number,
  ): void {
    const reference = this.slots - 1;
    // Sessions carry no p99 or distinct-users comparison: p99 0 gives p99Pct null, users 0 gives usersPct null.
    const point = (v: Float64Array, at: number): BiasPoint => ({
      count: v[at] as number,
      errors: v[at + 1] as number,
      p99: 0,
      users: 0,
    });
    const pooled = new PooledSum();
    for (const [service, v] of services) {
      const r = point(v, PER_POLICY * reference);
      const shown = point(v, PER_POLICY * policy + offset);
      pooled.add(r, shown);
      if (r.count === 0) continue;
      const s = serviceStages(dial, service);
      s.lastSeen = logTime;
      s.seenWindow = dial.closedWindows;
      trackerOf(dial, s.bias, slot, "service").push(compareOne(r, shown));
    }
    trackerOf(dial, dial.pooled, slot, "policy").push(pooled.sample());
  }

  /** Forgets services last measured before `cutoff` (log time). */
  sweep(cutoff: number): void {
    for (const dial of this.dials) sweepDial(dial, cutoff);
  }

  encode(w: ByteWriter): void {
    w.f64(this.comparedUntil);
    w.uint(this.windows.size);
    for (const [start, services] of this.windows) {
      w.f64(start);
      w.uint(services.size);
      for (const [service, v] of services) {
        w.string(service);
        for (const x of v) w.uint(x);
      }
    }
    for (const dial of this.dials) writePolicyDial(w, dial);
  }

  decode(r: ByteReader): void {
    this.comparedUntil = r.f64();
    for (let n = r.uint(); n > 0; n--) {
      const start = r.f64();
      const services = new Map<string, Float64Array>();
      for (let m = r.uint(); m > 0; m--)
        services.set(
          r.string(),
          Float64Array.from({ length: PER_POLICY * this.slots }, () => r.uint()),
        );
      this.windows.set(start, services);
    }
    for (const dial of this.dials) readPolicyDial(r, dial);
  }
}
