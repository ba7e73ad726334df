/**
 * Bytes of request bodies held at once (being read, parsed, or awaiting JetStream acks). Over the
 * limit a request is refused with 429 instead of being buffered: memory stays bounded.
 */
export class InFlightBudget {
  private held = 0;
  constructor(readonly limit: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Takes `n` bytes; false (and nothing taken) when that would exceed the limit. */
  take(n: number): boolean {
    if (this.held + n > this.limit) return false;
    this.held += n;
    return true;
  }

  release(n: number): void {
    this.held -= n;
  }
}
