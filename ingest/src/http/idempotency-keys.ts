/**
 * The keys clients sent lately, with the hash of the body each named (docs/security.md,
 * "Idempotency"): the same key from the same token with another body is a conflict (409), not a
 * retry. Kept for the stream's duplicate window and at most `maxKeys` (the oldest go first,
 * counted); forgetting a key never loses events, since the message id carries the body hash:
 * only the 409 is then not given.
 */
export class IdempotencyKeys {
  /** `<token identity>:<key>` → body hash and when it was first seen; insertion order = age. */
  private readonly keys = new Map<string, { hash: string; at: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys: number,
    private readonly evicted: () => void = () => undefined,
  ) {}

  get size(): number {
    return this.keys.size;
  }

  /** Records `key` for `hash`; returns false (nothing recorded) when the key names another body within the window. */
  claim(identity: string, key: string, hash: string, now: number): boolean {
    this.expire(now);
    const name = `${identity}:${key}`;
    const held = this.keys.get(name);
    if (held) return held.hash === hash;
    if (this.keys.size >= this.maxKeys) {
      const oldest = this.keys.keys().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
      this.evicted();
    }
    this.keys.set(name, { hash, at: now });
    return true;
  }

  private expire(now: number): void {
    for (const [name, { at }] of this.keys) {
      if (now - at < this.windowMs) return;
      this.keys.delete(name);
    }
  }
}
