import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { InputDriver } from "../input-driver.js";
import type { PolicyState } from "../policy-state.js";
import { TimerKind, TimerQueue, type EarlyTimer } from "../timer-queue.js";
import { proxyBefore, SessionTimerQueues, type TimerProxy } from "./session-timer-queues.js";
import type { SessionTimer } from "./session-timer.js";

const NO_OUTPUT = { pane: () => undefined, late: () => undefined };

/** The driver's side: one heap of proxies and early ticks under the driver's order, drained up to a time. */
function fakeDriver(): { heap: TimerQueue<TimerProxy | EarlyTimer>; driver: InputDriver<TimerProxy> } {
  const heap = new TimerQueue<TimerProxy | EarlyTimer>(proxyBefore);
  const driver = {
    atLogTime: (t: TimerProxy) => heap.push(t),
    atWatermark: (_p: PolicyState, t: TimerProxy) => heap.push(t),
  };
  return { heap, driver: driver as unknown as InputDriver<TimerProxy> };
}

const policies = [{ index: 0, eventTime: false } as PolicyState, { index: 1, eventTime: false } as PolicyState];

interface Arm {
  ahead: number;
  kind: number;
  policy: number;
  /** Timers the firing of this one arms (ms after its due; negative: before it, as a late flush at log time can). */
  then: number[];
}

const arm = fc.record({
  ahead: fc.integer({ min: 0, max: 5_000 }),
  kind: fc.integer({ min: 1, max: 5 }),
  policy: fc.integer({ min: 0, max: 1 }),
  then: fc.array(fc.integer({ min: -200, max: 3_000 }), { maxLength: 2 }),
});

const key = (t: SessionTimer | EarlyTimer): string =>
  `${t.due}/${t.kind}/${t.policy}/${"target" in t ? t.target : "early"}`;

/**
 * Runs the rounds (arm timers, add an early tick, drain the next second) and returns what fired in
 * order: through SessionTimerQueues and proxies, or (`reference`) with every timer in the driver's heap.
 */
function run(rounds: Arm[][], reference: boolean): string[] {
  const fired: string[] = [];
  const children = new Map<number, number[]>();
  let target = 0;
  let now = 0;
  const { heap, driver } = fakeDriver();
  const ref = new TimerQueue<SessionTimer | EarlyTimer>(proxyBefore);
  const fire = (t: SessionTimer): void => {
    fired.push(key(t));
    // Arm what this timer's trigger would, at or after now (a driver never runs a timer in the past).
    for (const d of children.get(t.target) ?? []) add(make(Math.max(now, t.due + d), 2, t.policy, []));
  };
  const queues = new SessionTimerQueues(policies, fire);
  queues.attach(driver);
  const make = (due: number, kind: number, policy: number, then: number[]): SessionTimer => {
    const t = reference ? ({ session: null, key: null } as SessionTimer) : queues.spare();
    t.due = due;
    t.kind = kind;
    t.policy = policy;
    t.target = target++;
    children.set(t.target, then);
    return t;
  };
  const add = (t: SessionTimer): void =>
    reference ? ref.push(t) : queues.atWatermark(policies[t.policy] as PolicyState, t);
  for (const round of rounds) {
    for (const a of round) add(make(now + a.ahead, a.kind, a.policy, a.then));
    const early: EarlyTimer = { due: now + 500, kind: TimerKind.Early, policy: 0 };
    if (reference) ref.push(early);
    else heap.push(early);
    now += 1_000;
    const q = reference ? ref : heap;
    while (q.peekDue() <= now) {
      const t = q.pop() as TimerProxy | SessionTimer | EarlyTimer;
      if (t.kind === TimerKind.Early) fired.push(key(t as EarlyTimer));
      else if (reference) fire(t as SessionTimer);
      else queues.fireProxy(t as TimerProxy, NO_OUTPUT);
    }
  }
  return fired;
}

describe("SessionTimerQueues", () => {
  it("fires exactly as one driver heap entry per timer would: with early ticks, and timers armed while firing", () => {
    fc.assert(
      fc.property(fc.array(fc.array(arm, { maxLength: 6 }), { maxLength: 40 }), (rounds) => {
        expect(run(rounds, false)).toEqual(run(rounds, true));
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });
});
