/**
 * Users with sessions: a fixed number of concurrent sessions, each a user making a run of
 * requests; when a session ends a new one starts for a user drawn from a skewed population
 * (a few heavy users, a long tail). Pure.
 */
import type { Prng } from "./prng.js";

interface Session {
  user: string;
  remaining: number;
}

export class Sessions {
  private readonly slots: Session[] = [];

  constructor(
    private readonly rng: Prng,
    private readonly population: number,
    concurrent: number,
    private readonly meanRequests = 25,
  ) {
    for (let i = 0; i < concurrent; i++) this.slots.push(this.fresh());
  }

  /** The user of the next request. */
  nextUser(): string {
    const slot = this.rng.int(this.slots.length);
    let s = this.slots[slot] as Session;
    if (s.remaining <= 0) {
      s = this.fresh();
      this.slots[slot] = s;
    }
    s.remaining--;
    return s.user;
  }

  private fresh(): Session {
    const u = this.rng.next();
    const id = Math.floor(this.population * u * u);
    return { user: `user-${id.toString(36)}`, remaining: 1 + Math.round(this.rng.exponential(this.meanRequests)) };
  }
}
