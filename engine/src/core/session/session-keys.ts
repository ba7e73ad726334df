/**
 * The (service, user) keys of the session store (docs/decisions/0034-sessions-at-scale.md): per
 * key its first session row, the due of its purge timer, and per policy the last event time of the
 * latest session the policy closed (`closed`, −Infinity: none; docs/semantics.md, "Session
 * windows", the closed-session bound). Keys are found through one open-addressing hash table of
 * key indexes (linear probing, deletion by backward shift): no Map entry and no object per key,
 * only the user's string. At most `maxKeys` keys are held: a new key past the cap is refused, and
 * the caller counts its events (an explosion of users meets a counted bound, never memory).
 */
import { CaptureBuffers, GROWTH, grownTo, NO_SLOT, type CapturedTable } from "./session-slots.js";

export const NO_KEY = -1;

/** The keys as they stood, copied: columns head, armed, closed; each key's user ("" free) and service. */
export interface CapturedKeys extends CapturedTable {
  readonly user: readonly string[];
  readonly serviceIndex: Int32Array;
  readonly services: readonly (string | null)[];
}
const EMPTY = -1;

/** A string that owns its characters: a slice of a decoded batch would keep the whole batch alive. */
function owned(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/** FNV-1a over the service index and the user's UTF-16 units, then a final mix (the table's low bits index it). */
function hashOf(service: number, user: string): number {
  let h = Math.imul(0x811c9dc5 ^ service, 0x01000193);
  for (let i = 0; i < user.length; i++) h = Math.imul(h ^ user.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

export class SessionKeys {
  head = new Int32Array(0);
  /** Due of the key's purge timer on the log-time clock (Infinity: none). */
  armed = new Float64Array(0);
  /** Per key, `policies` numbers: each policy's closed-session bound. */
  closed = new Float64Array(0);
  /** Per key: its service's index in `services`. */
  private serviceIndex = new Int32Array(0);
  /** "" for a free key. */
  readonly user: string[] = [];
  top = 0;
  live = 0;
  /** First free key (NO_KEY: none); the list goes on through `head`. */
  private freeHead = NO_KEY;
  /** The hash table: key indexes (EMPTY: none), a power of two at most half full. */
  private slots = new Int32Array(1024).fill(EMPTY);
  /** Service names by index, how many keys hold each, and the index of a name. */
  private readonly services: (string | null)[] = [];
  private readonly serviceKeys: number[] = [];
  private readonly serviceIds = new Map<string, number>();
  private lastService = "";
  private lastServiceId = -1;
  private readonly captures = new CaptureBuffers();
  /** The users copied at the last capture (reused, like the column copies). */
  private readonly users: string[] = [];

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

  serviceOf(k: number): string {
    return this.services[this.serviceIndex[k] as number] as string;
  }

  /** The key of (service, user); created when new; NO_KEY when new and `maxKeys` are held. */
  find(service: string, user: string): number {
    const sid = this.serviceId(service);
    const h = hashOf(sid, user);
    const mask = this.slots.length - 1;
    let i = h & mask;
    for (let k = this.slots[i] as number; k !== EMPTY; k = this.slots[i] as number) {
      if (this.serviceIndex[k] === sid && this.user[k] === user) return k;
      i = (i + 1) & mask;
    }
    if (this.live >= this.maxKeys) return NO_KEY;
    const k = this.alloc(sid, owned(user));
    this.slots[i] = k;
    if (2 * this.live > this.slots.length) this.rehash(this.slots.length * 2);
    return k;
  }

  /** Forgets a key (no session row, no bound left). */
  release(k: number): void {
    this.unindex(k);
    const sid = this.serviceIndex[k] as number;
    if (--(this.serviceKeys[sid] as number) === 0) this.forgetService(sid);
    this.user[k] = "";
    this.armed[k] = Infinity;
    this.live--;
    this.head[k] = this.freeHead;
    this.freeHead = k;
  }

  /** The keys held, in the order a snapshot writes them (ascending index). */
  *keys(): Generator<number, void, void> {
    for (let k = 0; k < this.top; k++) if (this.user[k] !== "") yield k;
  }

  /** Copies of the used keys (their users' strings by reference: strings do not change). */
  capture(): CapturedKeys {
    const top = this.top;
    const columns = [this.head, this.armed, this.closed, this.serviceIndex];
    const copy = this.captures.copy(columns, [top, top, top * this.policies, top]);
    const [head, armed, closed, serviceIndex] = copy.columns as [Int32Array, Float64Array, Float64Array, Int32Array];
    const user = copy.own ? this.users : [];
    user.length = top;
    for (let k = 0; k < top; k++) user[k] = this.user[k] as string;
    return {
      top,
      firstFree: this.freeHead,
      live: this.live,
      columns: [head, armed, closed],
      user,
      serviceIndex,
      services: this.services.slice(),
      release: copy.release,
    };
  }

  /** The first free key (its list goes on through `head`), for the snapshot. */
  get firstFree(): number {
    return this.freeHead;
  }

  /** Bytes of the backing arrays and the table (the user strings and their array are not counted). */
  get bytes(): number {
    let n = this.slots.byteLength;
    for (const a of [this.head, this.armed, this.closed, this.serviceIndex]) n += a.byteLength;
    return n;
  }

  /** Restores key k as a snapshot wrote it (head, armed and bounds are set by the caller). */
  restoreKey(k: number, service: string, user: string): void {
    const sid = this.serviceId(service);
    this.serviceIndex[k] = sid;
    this.serviceKeys[sid] = (this.serviceKeys[sid] as number) + 1;
    this.user[k] = user;
  }

  /** Restores the bookkeeping a snapshot wrote; the caller fills the columns and restores each key after it. */
  restore(top: number, firstFree: number, live: number): void {
    if (this.capacity < top) this.resize(top);
    this.top = top;
    for (let k = 0; k < top; k++) this.user[k] ??= "";
    this.freeHead = firstFree;
    this.live = live;
  }

  /** Indexes every restored key (after every restoreKey). */
  reindex(): void {
    let size = 1024;
    while (size < 2 * this.live) size *= 2;
    this.rehash(size);
  }

  private serviceId(service: string): number {
    if (service === this.lastService && this.lastServiceId >= 0) return this.lastServiceId;
    let sid = this.serviceIds.get(service);
    if (sid === undefined) {
      sid = this.services.indexOf(null);
      if (sid < 0) sid = this.services.length;
      this.services[sid] = service;
      this.serviceKeys[sid] = 0;
      this.serviceIds.set(service, sid);
    }
    this.lastService = service;
    this.lastServiceId = sid;
    return sid;
  }

  private forgetService(sid: number): void {
    this.serviceIds.delete(this.services[sid] as string);
    if (this.lastServiceId === sid) this.lastServiceId = -1;
    this.services[sid] = null;
  }

  private alloc(sid: number, user: string): number {
    let k = this.freeHead;
    if (k !== NO_KEY) this.freeHead = this.head[k] as number;
    else k = this.top++;
    if (k >= this.capacity) this.resize(Math.ceil(this.capacity * GROWTH));
    this.live++;
    this.head[k] = NO_SLOT;
    this.armed[k] = Infinity;
    this.closed.fill(-Infinity, k * this.policies, (k + 1) * this.policies);
    this.serviceIndex[k] = sid;
    this.serviceKeys[sid] = (this.serviceKeys[sid] as number) + 1;
    this.user[k] = user;
    return k;
  }

  /** Takes key k out of the table, shifting back the entries after it that probed past its place. */
  private unindex(k: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let hole = this.home(k) & mask;
    while (slots[hole] !== k) hole = (hole + 1) & mask;
    slots[hole] = EMPTY;
    for (let j = (hole + 1) & mask; slots[j] !== EMPTY; j = (j + 1) & mask) {
      const home = this.home(slots[j] as number) & mask;
      // Entry j may move to the hole unless its home lies cyclically in (hole, j].
      const stays = hole < j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      slots[hole] = slots[j] as number;
      slots[j] = EMPTY;
      hole = j;
    }
  }

  /** Key k's hash (recomputed: a column of hashes would cost 4 bytes a key). */
  private home(k: number): number {
    return hashOf(this.serviceIndex[k] as number, this.user[k] as string);
  }

  private rehash(size: number): void {
    const slots = new Int32Array(size).fill(EMPTY);
    const mask = size - 1;
    for (let k = 0; k < this.top; k++) {
      if (this.user[k] === "") continue;
      let i = this.home(k) & mask;
      while (slots[i] !== EMPTY) i = (i + 1) & mask;
      slots[i] = k;
    }
    this.slots = slots;
  }

  private resize(size: number): void {
    this.head = grownTo(this.head, size);
    this.armed = grownTo(this.armed, size);
    this.closed = grownTo(this.closed, size * this.policies);
    this.serviceIndex = grownTo(this.serviceIndex, size);
  }
}
