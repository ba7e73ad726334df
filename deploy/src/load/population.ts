/**
 * The user population of `tidemark load` (docs/operations.md, "`tidemark load`", "Traffic
 * model"): every user is either in a session on one service — a run of requests with think times
 * between them — or quiet for more than a minute before its next session. Sizes come from
 * session-shape.ts. The population starts in its steady state (each user in a session or quiet
 * with the long-run odds, mid-way through its current wait), so the rate is `rate` from the first
 * second, with no ramp. Pure: time is passed in; requests come out in time order.
 */
import type { Prng } from "../demo/prng.js";
import { QUIET_MIN_MS, activeShare, type SessionShape } from "./session-shape.js";
import { TimeHeap } from "./time-heap.js";

/** Receives one request: the user's index, the service of its session, and when (ms). */
export type OnRequest = (user: number, service: number, at: number) => void;

export class Population {
  private readonly nextAt: Float64Array;
  private readonly inSession: Uint8Array;
  private readonly service: Int32Array;
  private readonly heap: TimeHeap;
  private readonly endChance: number;

  constructor(
    users: number,
    private readonly shape: SessionShape,
    /** The service a new session is on, from a uniform draw in [0, 1). */
    private readonly pickService: (u: number) => number,
    private readonly rng: Prng,
    startMs: number,
  ) {
    this.nextAt = new Float64Array(users);
    this.inSession = new Uint8Array(users);
    this.service = new Int32Array(users);
    this.heap = new TimeHeap(this.nextAt);
    this.endChance = 1 / shape.requestsMean;
    const busy = activeShare(shape);
    for (let u = 0; u < users; u++) {
      const active = rng.chance(busy);
      this.inSession[u] = active ? 1 : 0;
      if (active) this.service[u] = pickService(rng.next());
      this.nextAt[u] = startMs + (active ? this.thinkResidual() : this.quietResidual());
      this.heap.push(u);
    }
  }

  /** Every request at or before `until`, in time order. */
  take(until: number, onRequest: OnRequest): void {
    while (this.heap.peekTime() <= until) {
      const u = this.heap.pop() as number;
      const at = this.nextAt[u] as number;
      if (this.inSession[u] === 0) {
        this.inSession[u] = 1;
        this.service[u] = this.pickService(this.rng.next());
      }
      onRequest(u, this.service[u] as number, at);
      if (this.rng.chance(this.endChance)) {
        this.inSession[u] = 0;
        this.nextAt[u] = at + QUIET_MIN_MS + this.rng.exponential(this.shape.quietMeanMs - QUIET_MIN_MS);
      } else {
        this.nextAt[u] = at + this.rng.uniform(0.5, 1.5) * this.shape.thinkMeanMs;
      }
      this.heap.push(u);
    }
  }

  /** Time left of a think time caught mid-way (length-biased uniform ½T…1½T). */
  private thinkResidual(): number {
    const t = this.shape.thinkMeanMs;
    if (this.rng.chance(0.5)) return this.rng.uniform(0, 0.5 * t);
    return 0.5 * t + t * (1 - Math.sqrt(this.rng.next()));
  }

  /** Time left of a quiet spell caught mid-way (QUIET_MIN_MS plus an exponential). */
  private quietResidual(): number {
    const mean = this.shape.quietMeanMs;
    if (this.rng.chance(QUIET_MIN_MS / mean)) return this.rng.uniform(0, QUIET_MIN_MS);
    return QUIET_MIN_MS + this.rng.exponential(mean - QUIET_MIN_MS);
  }
}
