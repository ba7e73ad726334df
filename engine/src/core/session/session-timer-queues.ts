/**
 * The session operator's timer queues (docs/decisions/0020-session-speed.md, decision 2): every
 * session timer waits in a TimerWheel (one per driver queue: log time, and each event-time policy's
 * W), and the input driver's heap holds only a proxy carrying the order key (due, kind, policy,
 * target) of a wheel's earliest timer. When a proxy pops, every wheel timer at or before its key
 * fires, in order: the driver popped it as its earliest entry, so nothing of the driver's (early
 * ticks, other queues' proxies) lies in between. Invariant: while a wheel holds timers, a proxy of
 * it at or before its earliest is in the driver's queue. The timers' total order is unchanged
 * (session-timer.ts), so output is identical to one heap entry per timer.
 */
import type { DriverView, InputDriver } from "../input-driver.js";
import type { PolicyState } from "../policy-state.js";
import { TimerKind, type EarlyTimer } from "../timer-queue.js";
import type { CoreOutput } from "../types.js";
import { compareSessionTimers, type SessionTimer, type SessionTimerView } from "./session-timer.js";
import { TimerWheel } from "./timer-wheel.js";

/** Width of a wheel bucket in ms of its queue's time. */
const BUCKET_MS = 1_000;
/** Fired timers kept for reuse, at most. */
const MAX_FREE = 4_096;

/** A wheel's stand-in in the driver's queue: the order key of a timer in it. */
export interface TimerProxy {
  due: number;
  kind: number;
  policy: number;
  target: number;
  /** Index of its wheel (queues[i]). */
  readonly queue: number;
}

interface Queue {
  readonly wheel: TimerWheel<SessionTimer>;
  /** Proxies of this wheel in the driver's queue, latest key first (the earliest is last). */
  readonly proxies: TimerProxy[];
  /** The policy whose W orders the queue (null: log time). */
  readonly policy: PolicyState | null;
}

type Keyed = TimerProxy | SessionTimer;

/**
 * The driver's order of its entries: a proxy is ordered by its timer's key, exactly as
 * `compareSessionTimers` orders the timers themselves; an early tick is alone at its (due, kind, policy).
 */
export function proxyBefore(a: Keyed | EarlyTimer, b: Keyed | EarlyTimer): boolean {
  if (a.due !== b.due) return a.due < b.due;
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.policy !== b.policy) return a.policy < b.policy;
  return a.kind !== TimerKind.Early && (a as Keyed).target < (b as Keyed).target;
}

export class SessionTimerQueues implements SessionTimerView {
  private readonly queues: Queue[] = [];
  /** Fired timers, for reuse (a fired timer is referenced by nothing). */
  private readonly free: SessionTimer[] = [];
  /** Per policy: the index of the queue its W timers go to. */
  private readonly queueOf: number[];
  private driver: InputDriver<TimerProxy> | null = null;

  constructor(
    policies: readonly PolicyState[],
    private readonly fire: (t: SessionTimer, out: CoreOutput) => void,
    /** Before a bucket is sorted: false when the timer would fire nothing, else true at its (maybe later) due. */
    private readonly settle: (t: SessionTimer) => boolean = () => true,
  ) {
    this.queues.push(this.newQueue(null));
    this.queueOf = policies.map((p) => {
      if (!p.eventTime) return 0;
      this.queues.push(this.newQueue(p));
      return this.queues.length - 1;
    });
  }

  /** The driver the proxies go to (built after this, since its hooks call into it). */
  attach(driver: InputDriver<TimerProxy>): void {
    this.driver = driver;
  }

  get clock(): DriverView<SessionTimer>["clock"] {
    return (this.driver as InputDriver<TimerProxy>).clock;
  }

  watermarkOf(p: PolicyState): number {
    return (this.driver as InputDriver<TimerProxy>).watermarkOf(p);
  }

  dueAt(p: PolicyState, at: number): number {
    return (this.driver as InputDriver<TimerProxy>).dueAt(p, at);
  }

  spare(): SessionTimer {
    return this.free.pop() ?? { due: 0, kind: 0, policy: 0, target: 0, session: null, key: null };
  }

  atWatermark(p: PolicyState, t: SessionTimer): void {
    this.arm(this.queueOf[p.index] as number, t);
  }

  atLogTime(t: SessionTimer): void {
    this.arm(0, t);
  }

  /** Timers pending in the wheels (for tests). */
  get size(): number {
    let n = 0;
    for (const q of this.queues) n += q.wheel.size;
    return n;
  }

  /** The driver popped a proxy: fire every timer of its wheel up to its key, then re-proxy the wheel. */
  fireProxy(proxy: TimerProxy, out: CoreOutput): void {
    const q = this.queues[proxy.queue] as Queue;
    const proxies = q.proxies;
    // The driver pops in key order, so the popped proxy is this wheel's earliest.
    if (proxies[proxies.length - 1] === proxy) proxies.pop();
    else proxies.splice(proxies.indexOf(proxy), 1);
    const wheel = q.wheel;
    for (let t = wheel.peek(); t !== undefined && !proxyBefore(proxy, t); t = wheel.peek()) {
      wheel.pop();
      this.fire(t, out);
      this.recycle(t);
    }
    const t = wheel.peek();
    if (t !== undefined) this.cover(q, t, proxy);
  }

  private recycle(t: SessionTimer): void {
    t.session = null;
    t.key = null;
    if (this.free.length < MAX_FREE) this.free.push(t);
  }

  private newQueue(policy: PolicyState | null): Queue {
    const settle = (t: SessionTimer): boolean => {
      if (this.settle(t)) return true;
      this.recycle(t);
      return false;
    };
    return { wheel: new TimerWheel<SessionTimer>(BUCKET_MS, compareSessionTimers, settle), proxies: [], policy };
  }

  private arm(index: number, t: SessionTimer): void {
    const q = this.queues[index] as Queue;
    q.wheel.push(t);
    this.cover(q, t, null);
  }

  /** Makes sure a proxy at or before t is in the driver's queue (reusing a popped one if given). */
  private cover(q: Queue, t: SessionTimer, reuse: TimerProxy | null): void {
    const proxies = q.proxies;
    const earliest = proxies[proxies.length - 1];
    if (earliest !== undefined && !proxyBefore(t, earliest)) return;
    const proxy = reuse ?? { due: 0, kind: 0, policy: 0, target: 0, queue: this.queues.indexOf(q) };
    proxy.due = t.due;
    proxy.kind = t.kind;
    proxy.policy = t.policy;
    proxy.target = t.target;
    proxies.push(proxy);
    const driver = this.driver as InputDriver<TimerProxy>;
    if (q.policy === null) driver.atLogTime(proxy);
    else driver.atWatermark(q.policy, proxy);
  }
}
