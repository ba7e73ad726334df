/**
 * Each policy's verdict on one event of a key (docs/decisions/0018-shared-sessions.md, decision 3):
 * per lane, the run of shared facts the event touches is found once and each policy of the lane
 * judges the event on the facts of it that it has open (docs/semantics.md, "Session windows"); the
 * event is then merged once into the lane for the keepers, after moving apart the policies whose
 * view would otherwise change under them. Scratch arrays per policy, one set per operator: nothing
 * is allocated per event but the merge result.
 */
import type { TelemetryEvent } from "../../protocol.js";
import type { PolicyState } from "../policy-state.js";
import type { SessionConfig } from "./session-config.js";
import { touchFrom, touchTo, type KeyState, type Lane, type Session, type SessionFacts } from "./session-key.js";
import { forkLane, mergeEvent, type Merge } from "./session-lanes.js";

/** Marks a policy that keeps the event until its lane's merge is known. */
const KEEP: Merge = Object.freeze({ target: null as unknown as SessionFacts, swallowed: [] as Session[] as never });

export class SessionVerdicts {
  /** Per policy: its W at the event (set by the caller before judging). */
  readonly watermarks: Float64Array;
  /** Per policy: the merge that now holds the event, or null when the policy drops it. */
  readonly merged: (Merge | null)[];
  /** Per policy that drops the event: the window of its late record. */
  readonly dropStart: Float64Array;
  readonly dropEnd: Float64Array;

  constructor(
    private readonly policies: readonly PolicyState[],
    private readonly sessions: Readonly<SessionConfig>,
  ) {
    this.watermarks = new Float64Array(policies.length);
    this.merged = policies.map(() => null);
    this.dropStart = new Float64Array(policies.length);
    this.dropEnd = new Float64Array(policies.length);
  }

  /**
   * Each policy of the lane judges the event on its own view (docs/semantics.md, "Session windows":
   * a closed bound, or the union's end + grace ≤ W, drops it); then the event is merged once into
   * the lane for the policies that keep it and see the whole run it touches. A policy that keeps it
   * but has only part of that run open, or drops it while having part of the run open, first moves
   * to a lane of its own (docs/decisions/0018-shared-sessions.md).
   */
  judge(k: KeyState, lane: Lane, e: TelemetryEvent, period: number, error: boolean): void {
    const gap = this.sessions.gapMs;
    const list = lane.sessions;
    const ts = e.ts;
    const from = touchFrom(list, period, ts, gap);
    const to = touchTo(list, from, period, ts, gap);
    let keeping = 0;
    let partial: number[] | null = null;
    let dropping: number[] | null = null;
    for (const i of lane.policies) {
      let first = ts;
      let last = ts;
      let full = true;
      let some = false;
      for (let j = from; j < to; j++) {
        const f = list[j] as SessionFacts;
        if (f.views[i] === null) full = false;
        else {
          some = true;
          if (f.firstTs < first) first = f.firstTs;
          if (f.lastTs > last) last = f.lastTs;
        }
      }
      const closed = k.closedUntil[i] as number;
      // Joining (or bridging to) a closed session would change a result the policy has forgotten.
      if (ts < closed + gap && Math.floor(closed / this.sessions.maxLengthMs) === period) {
        this.dropStart[i] = Math.min(ts, closed);
        this.dropEnd[i] = closed + gap;
      } else if (last + gap + (this.policies[i] as PolicyState).cfg.graceMs <= (this.watermarks[i] as number)) {
        this.dropStart[i] = first;
        this.dropEnd[i] = last + gap;
      } else {
        if (full) keeping++;
        else (partial ??= []).push(i);
        this.merged[i] = KEEP;
        continue;
      }
      this.merged[i] = null;
      if (some) (dropping ??= []).push(i);
    }
    if (partial !== null) for (const i of partial) this.merge(forkLane(k, lane, [i]), [i], e, period, error);
    if (keeping === 0) return;
    if (dropping !== null) forkLane(k, lane, dropping);
    this.merge(lane, lane.policies, e, period, error);
  }

  /** Merges the event into the lane once, for those of `policies` that keep it. */
  private merge(lane: Lane, policies: readonly number[], e: TelemetryEvent, period: number, error: boolean): void {
    const m = mergeEvent(lane, this.policies.length, period, e.ts, e.route, error, this.sessions.gapMs);
    for (const i of policies) if (this.merged[i] !== null) this.merged[i] = m;
  }
}
