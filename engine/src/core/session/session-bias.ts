/**
 * Measured bias of session results (docs/semantics.md, "Measured bias", applied to sessions;
 * docs/decisions/0009): a hidden reference sessionizer keeps every event to the reference horizon.
 * Each closed session counts in the metrics window holding its end, per service and per policy
 * (reference last). When the reference has closed a window, each policy's sessions and error
 * sessions there are compared with the reference's (`measureBias`: count shortfall %, error-session
 * share difference in pp; p99Pct and usersPct are null, as sessions carry neither) and pushed into
 * the policy's bias tracker, so session panes carry a measured bias like window panes.
 */
import { measureBias, type BiasPoint } from "../bias.js";
import type { ByteReader, ByteWriter } from "../byte-codec.js";
import type { PolicyState } from "../policy-state.js";
import { readBiasSamples, writeBiasSamples } from "../snapshot-parts.js";

export class SessionBias {
  /** Window start → service → [sessions, error sessions] per policy index (reference last). */
  readonly windows = new Map<number, Map<string, Float64Array>>();
  /** End of the latest window compared: closes into it come too late and are ignored. */
  comparedUntil = -Infinity;

  constructor(
    readonly windowMs: number,
    /** Policies including the reference (its index is slots − 1). */
    readonly slots: number,
  ) {}

  /** Counts a closed session; returns the window start when the window is new (to schedule it). */
  record(policy: number, service: string, end: number, error: boolean): number | null {
    const start = Math.floor(end / this.windowMs) * this.windowMs;
    if (start + this.windowMs <= this.comparedUntil) return null;
    let services = this.windows.get(start);
    const fresh = services === undefined;
    if (services === undefined) this.windows.set(start, (services = new Map()));
    let v = services.get(service);
    if (v === undefined) services.set(service, (v = new Float64Array(2 * this.slots)));
    v[2 * policy] = (v[2 * policy] as number) + 1;
    if (error) v[2 * policy + 1] = (v[2 * policy + 1] as number) + 1;
    return fresh ? start : null;
  }

  /**
   * Compares the window for every policy that has closed it (`closed(p)`), then forgets it.
   * A window the reference saw no session end in yields no sample.
   */
  compare(start: number, policies: readonly PolicyState[], closed: (p: PolicyState) => boolean): void {
    const services = this.windows.get(start);
    this.windows.delete(start);
    this.comparedUntil = Math.max(this.comparedUntil, start + this.windowMs);
    if (services === undefined) return;
    const reference = this.slots - 1;
    // Sessions carry no p99 or distinct-users comparison: p99 0 gives p99Pct null, users 0 gives usersPct null.
    const point = (v: Float64Array, i: number): BiasPoint => ({
      count: v[2 * i] as number,
      errors: v[2 * i + 1] as number,
      p99: 0,
      users: 0,
    });
    const ref = new Map<string, BiasPoint>();
    let total = 0;
    for (const [service, v] of services) {
      ref.set(service, point(v, reference));
      total += v[2 * reference] as number;
    }
    if (total === 0) return;
    for (const p of policies) {
      if (p.index === reference || !closed(p)) continue;
      p.bias.push(measureBias(ref, (s) => point(services.get(s) as Float64Array, p.index)));
    }
  }

  encode(w: ByteWriter, policies: readonly PolicyState[]): void {
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
    for (const p of policies) writeBiasSamples(w, p);
  }

  decode(r: ByteReader, policies: readonly PolicyState[]): void {
    this.comparedUntil = r.f64();
    for (let n = r.uint(); n > 0; n--) {
      const start = r.f64();
      const services = new Map<string, Float64Array>();
      for (let m = r.uint(); m > 0; m--)
        services.set(
          r.string(),
          Float64Array.from({ length: 2 * this.slots }, () => r.uint()),
        );
      this.windows.set(start, services);
    }
    for (const p of policies) readBiasSamples(r, p);
  }
}
