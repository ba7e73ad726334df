/**
 * Per-token write limits (docs/security.md, "Ingest limits"): requests per second (a bucket of
 * one second's worth, refilled continuously) and requests in flight at once, by token identity,
 * so one client cannot starve the others. Identities are the configured tokens (or `open`):
 * the map is bounded by the config.
 */
import { IngestError } from "../errors.js";

export type TokenLimit = "rate" | "concurrency";

interface TokenState {
  budget: number;
  at: number;
  inFlight: number;
}

export class TokenLimits {
  private readonly tokens = new Map<string, TokenState>();

  /** `rate` requests/s (0: no limit) and `concurrency` requests at once (0: no limit) per token. */
  constructor(
    private readonly rate: number,
    private readonly concurrency: number,
    private readonly limited: (limit: TokenLimit) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one request of `identity`, returning its release; throws TM_INGEST_RATE_LIMITED (429) past a limit. */
  enter(identity: string): () => void {
    const now = this.now();
    let s = this.tokens.get(identity);
    if (!s) this.tokens.set(identity, (s = { budget: this.rate, at: now, inFlight: 0 }));
    if (this.rate > 0) {
      s.budget = Math.min(this.rate, s.budget + ((now - s.at) * this.rate) / 1000);
      s.at = now;
      if (s.budget < 1) this.refuse("rate", `more than ${this.rate} requests per second with this token (tokenRate)`);
    }
    if (this.concurrency > 0 && s.inFlight >= this.concurrency)
      this.refuse("concurrency", `${this.concurrency} requests of this token are in flight (tokenConcurrency)`);
    if (this.rate > 0) s.budget -= 1;
    s.inFlight++;
    const state = s;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.inFlight--;
    };
  }

  private refuse(limit: TokenLimit, why: string): never {
    this.limited(limit);
    throw new IngestError(
      "TM_INGEST_RATE_LIMITED",
      `${why}: retry after the Retry-After delay, or send larger batches`,
    );
  }
}
