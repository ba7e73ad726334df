/**
 * The (service, user) keys of the session store (docs/decisions/0034-sessions-at-scale.md): per
 * key its first session row, the due of its purge timer, and per policy the last event time of the
 * latest session the policy closed (`closed`, −Infinity: none; docs/semantics.md, "Session
 * windows", the closed-session bound). Keys are found through one map of users per service. At
 * most `maxKeys` keys are held: a new key past the cap is refused, and the caller counts its events
 * (an explosion of users meets a counted bound, never memory).
 */
import { grownTo, NO_SLOT } from "./session-slots.js";

export const NO_KEY = -1;

/** A string that owns its characters: a slice of a decoded batch would keep the whole batch alive. */
function owned(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

export class SessionKeys {
  head = new Int32Array(0);
  /** Due of the key's purge timer on the log-time clock (Infinity: none). */
  armed = new Float64Array(0);
  /** Per key, `policies` numbers: each policy's closed-session bound. */
  closed = new Float64Array(0);
  readonly service: string[] = [];
  readonly user: string[] = [];
  top = 0;
  live = 0;
  private free = new Int32Array(0);
  private freeCount = 0;
  private readonly byService = new Map<string, Map<string, number>>();
  private lastService = "";
  private lastUsers: Map<string, number> | undefined;

  constructor(
    readonly policies: number,
    readonly maxKeys: number,
    capacity = 1024,
  ) {
    this.resize(capacity);
  }

  get capacity(): number {
    return this.head.length;
  }

  /** The key of (service, user); created when new; NO_KEY when new and `maxKeys` are held. */
  find(service: string, user: string): number {
    // Consecutive events often share a service (a batch is per partition): one lookup saved.
    let users = this.lastUsers !== undefined && this.lastService === service ? this.lastUsers : this.byService.get(service);
    if (users === undefined) {
      if (this.live >= this.maxKeys) return NO_KEY;
      this.byService.set(service, (users = new Map()));
    }
    this.lastService = service;
    this.lastUsers = users;
    const k = users.get(user);
    if (k !== undefined) return k;
    if (this.live >= this.maxKeys) return NO_KEY;
    const fresh = this.alloc(service, owned(user));
    users.set(this.user[fresh] as string, fresh);
    return fresh;
  }

  /** Forgets a key (no session row, no bound left). */
  release(k: number): void {
    const service = this.service[k] as string;
    const users = this.byService.get(service);
    users?.delete(this.user[k] as string);
    if (users?.size === 0) {
      this.byService.delete(service);
      if (this.lastService === service) this.lastUsers = undefined;
    }
    this.service[k] = "";
    this.user[k] = "";
    this.armed[k] = Infinity;
    this.live--;
    this.free[this.freeCount++] = k;
  }

  /** The keys held, in the order a snapshot writes them (ascending index). */
  *keys(): Generator<number, void, void> {
    for (let k = 0; k < this.top; k++) if (this.service[k] !== "" || this.user[k] !== "") yield k;
  }

  isLive(k: number): boolean {
    return k < this.top && (this.service[k] !== "" || this.user[k] !== "");
  }

  freeList(): Int32Array {
    return this.free.subarray(0, this.freeCount);
  }

  /** Bytes of the backing arrays (the map, strings and arrays of names are counted by the benchmark). */
  get bytes(): number {
    return this.head.byteLength + this.armed.byteLength + this.closed.byteLength + this.free.byteLength;
  }

  /** Restores key k as a snapshot wrote it (head, armed and bounds are set by the caller). */
  restoreKey(k: number, service: string, user: string): void {
    while (this.capacity <= k) this.resize(Math.ceil(this.capacity * 1.5));
    this.service[k] = service;
    this.user[k] = user;
    let users = this.byService.get(service);
    if (users === undefined) this.byService.set(service, (users = new Map()));
    users.set(user, k);
  }

  /** Restores the bookkeeping a snapshot wrote (after every restoreKey). */
  restore(top: number, free: readonly number[]): void {
    while (this.capacity < top) this.resize(Math.ceil(this.capacity * 1.5));
    this.top = top;
    for (let k = 0; k < top; k++) if (this.service[k] === undefined) this.service[k] = this.user[k] = "";
    this.freeCount = 0;
    for (const k of free) this.free[this.freeCount++] = k;
    this.live = top - free.length;
  }

  private alloc(service: string, user: string): number {
    const k = this.freeCount > 0 ? (this.free[--this.freeCount] as number) : this.top++;
    if (k >= this.capacity) this.resize(Math.ceil(this.capacity * 1.5));
    this.live++;
    this.head[k] = NO_SLOT;
    this.armed[k] = Infinity;
    this.closed.fill(-Infinity, k * this.policies, (k + 1) * this.policies);
    this.service[k] = service;
    this.user[k] = user;
    return k;
  }

  private resize(size: number): void {
    this.head = grownTo(this.head, size);
    this.armed = grownTo(this.armed, size);
    this.closed = grownTo(this.closed, size * this.policies);
    this.free = grownTo(this.free, size);
  }
}
