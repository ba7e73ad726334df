/**
 * Lanes of a key (docs/decisions/0018-shared-sessions.md): policies that see the same sessions
 * share one sorted list of SessionFacts. Invariant: a policy's view of facts exists only while the
 * facts are exactly that policy's session (the offline session of the events it kept), so facts
 * are changed in place only for policies that all make the same change; a policy that would not
 * (it drops an event the others merge, or its open sessions are a strict part of the run the event
 * touches) first moves to a lane of its own with copies of the facts it has open.
 */
import { absorb, newFacts, touchFrom, touchTo, type KeyState, type Lane, type SessionFacts } from "./session-key.js";

const NO_FACTS: readonly SessionFacts[] = Object.freeze([]);

/** The lane of the key that holds policy p. */
export function laneOf(k: KeyState, p: number): Lane {
  for (const lane of k.lanes) if (lane.policies.includes(p)) return lane;
  throw new Error(`session key ${k.keyId} has no lane for policy ${p}`);
}

/**
 * Moves `moving` (policies of `lane`, ascending) to a new lane of the key, with copies of the
 * facts they have open there; facts no policy of `lane` still has open leave it.
 */
export function forkLane(k: KeyState, lane: Lane, moving: readonly number[]): Lane {
  const next: Lane = { sessions: [], policies: [...moving] };
  lane.policies = lane.policies.filter((p) => !moving.includes(p));
  let kept = 0;
  const list = lane.sessions;
  for (const f of list) {
    let copy: SessionFacts | null = null;
    for (const p of moving) {
      const v = f.views[p] ?? null;
      if (v === null) continue;
      if (copy === null) {
        copy = { ...f, lane: next, views: new Array<null>(f.views.length).fill(null), viewers: 0 };
        next.sessions.push(copy);
      }
      copy.views[p] = v;
      copy.viewers++;
      v.facts = copy;
      f.views[p] = null;
      f.viewers--;
    }
    if (f.viewers > 0) list[kept++] = f;
  }
  list.length = kept;
  k.lanes.push(next);
  return next;
}

/** Folds the lanes left without facts into another lane: their policies have nothing open to keep apart. */
export function tidyLanes(k: KeyState): void {
  if (k.lanes.length < 2) return;
  const target = k.lanes.find((l) => l.sessions.length > 0) ?? (k.lanes[0] as Lane);
  const policies = [...target.policies];
  let kept = 0;
  for (const lane of k.lanes) {
    if (lane === target || lane.sessions.length > 0) k.lanes[kept++] = lane;
    else policies.push(...lane.policies);
  }
  k.lanes.length = kept;
  target.policies = policies.sort((a, b) => a - b);
}

/** Removes facts no policy has open any more from their lane. */
export function dropFacts(k: KeyState, f: SessionFacts): void {
  const list = f.lane.sessions;
  list.splice(list.indexOf(f), 1);
  if (list.length === 0) tidyLanes(k);
}

/** The result of merging one event into a lane: the session it is in now and the ones it swallowed. */
export interface Merge {
  target: SessionFacts;
  swallowed: readonly SessionFacts[];
}

/**
 * Merges the event into the lane's facts: the run it touches becomes one session (the first of
 * the run, grown), or a new session opens where the run would be.
 */
export function mergeEvent(
  lane: Lane,
  policies: number,
  period: number,
  ts: number,
  route: string,
  error: boolean,
  gapMs: number,
): Merge {
  const list = lane.sessions;
  const from = touchFrom(list, period, ts, gapMs);
  const to = touchTo(list, from, period, ts, gapMs);
  if (to === from) {
    const target = newFacts(lane, policies, period, ts, route, error);
    list.splice(from, 0, target);
    return { target, swallowed: NO_FACTS };
  }
  const target = list[from] as SessionFacts;
  const swallowed = to - from > 1 ? list.splice(from + 1, to - from - 1) : NO_FACTS;
  for (const o of swallowed) absorb(target, o.firstTs, o.firstRoute, o.lastTs, o.lastRoute, o.count, o.errors);
  absorb(target, ts, route, ts, route, 1, error ? 1 : 0);
  return { target, swallowed };
}
