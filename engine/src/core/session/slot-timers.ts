/**
 * Session row and key timers (docs/decisions/0034-sessions-at-scale.md): one DueCalendar per clock (0:
 * log time; then each event-time policy's W), and in the input driver's queue one proxy at or
 * before each non-empty heap's earliest due (the pattern of a timer wheel behind one driver entry:
 * the driver's heap stays a few entries long). An id ≥ 0 is a session row, an id < 0 the key −1 − id
 * (its purge). Entries are never removed early: the owner keeps the due it armed per id and an entry
 * that no longer matches is stale and skipped when it pops.
 *
 * Invariant: while a heap holds entries, a proxy of it at or before its earliest is in the driver's
 * queue.
 */
import type { DriverView } from "../watermarks/input-driver.js";
import type { PolicyState } from "../panes/policy-state.js";
import { DueCalendar } from "./due-calendar.js";
import { PROXY_KIND, type SessionTimer, type SlotProxy } from "./session-timers.js";

interface Clock {
  readonly heap: DueCalendar;
  /** The event-time policy whose W this clock is (null: log time). */
  readonly policy: PolicyState | null;
  /** Dues of this heap's proxies in the driver's queue, latest first (the earliest is last). */
  readonly proxies: number[];
}

export class SlotTimers {
  private readonly clocks: Clock[] = [];
  /** Per policy: its clock. */
  readonly clockOf: number[];
  private driver: DriverView<SessionTimer> | null = null;

  constructor(policies: readonly PolicyState[]) {
    this.clocks.push({ heap: new DueCalendar(), policy: null, proxies: [] });
    this.clockOf = policies.map((p) => {
      if (!p.eventTime) return 0;
      this.clocks.push({ heap: new DueCalendar(), policy: p, proxies: [] });
      return this.clocks.length - 1;
    });
  }

  attach(driver: DriverView<SessionTimer>): void {
    this.driver = driver;
  }

  get count(): number {
    return this.clocks.length;
  }

  /** Entries pending (stale ones included). */
  get size(): number {
    let n = 0;
    for (const c of this.clocks) n += c.heap.size;
    return n;
  }

  get bytes(): number {
    let n = 0;
    for (const c of this.clocks) n += c.heap.bytes;
    return n;
  }

  arm(clock: number, id: number, due: number): void {
    const c = this.clocks[clock] as Clock;
    c.heap.push(due, id);
    this.cover(clock, c, due);
  }

  /**
   * The driver popped a proxy: every entry of its heap due at or before it is handed to `fire`
   * (in (due, id) order; `fire` may arm more), then the heap is proxied again at its earliest.
   */
  fireProxy(proxy: SlotProxy, fire: (clock: number, id: number, due: number) => void): void {
    const c = this.clocks[proxy.policy] as Clock;
    const proxies = c.proxies;
    // The earliest proxy is last, and the driver pops the earliest: nearly always a pop, no splice's array.
    if (proxies[proxies.length - 1] === proxy.due) proxies.pop();
    else {
      const at = proxies.lastIndexOf(proxy.due);
      if (at >= 0) proxies.splice(at, 1);
    }
    const heap = c.heap;
    for (let due = heap.peekDue(); due <= proxy.due; due = heap.peekDue()) {
      const id = heap.peekId();
      heap.pop();
      fire(proxy.policy, id, due);
    }
    if (heap.size > 0) this.cover(proxy.policy, c, heap.peekDue());
  }

  /** Drops every entry and forgets the proxies (the driver is being rebuilt: restore). */
  clear(): void {
    for (const c of this.clocks) {
      c.heap.clear();
      c.proxies.length = 0;
    }
  }

  /** Makes sure a proxy at or before `due` is in the driver's queue. */
  private cover(index: number, c: Clock, due: number): void {
    const earliest = c.proxies[c.proxies.length - 1];
    if (earliest !== undefined && earliest <= due) return;
    c.proxies.push(due);
    const proxy: SlotProxy = { due, kind: PROXY_KIND, policy: index };
    const driver = this.driver as DriverView<SessionTimer>;
    if (c.policy === null) driver.atLogTime(proxy);
    else driver.atWatermark(c.policy, proxy);
  }
}
