/**
 * One alert series' state — inactive, pending, firing — as a function of what each window's newest
 * pane says (docs/decisions/0014-alerts.md, "States"). Pure: times are the panes' log and window times.
 *
 * - A window's verdict is crossed or not, and early or settled (on-time, late, final).
 * - A crossed window, early or settled, makes the alert active; a settled window that does not
 *   cross ends the run; an early window that does not cross changes nothing, not even an earlier
 *   early pane of its window that crossed (an early pane can raise an alert, never end one).
 *   Windows more than `staleMs` apart do not make one run.
 * - Pending until the run spans `forMs` between window ends, then firing; once fired it stays
 *   firing while a run holds.
 * - A firing alert ends as **retracted** when no window that raised it is settled-crossed and the
 *   pane that ends it is a settled pane of one of those windows (it was raised on early panes the
 *   on-time or final panes contradict); otherwise as **resolved**. It also resolves when no pane of
 *   its series came for `staleMs` of window time.
 */

export interface Verdict {
  /** Window end (the sample time). */
  readonly end: number;
  readonly crossed: boolean;
  /** On-time, late or final: the policy's settled word on the window. */
  readonly settled: boolean;
  /** Log time of the pane behind it. */
  readonly at: number;
}

export type AlertState = "inactive" | "pending" | "firing";

export type Transition<V extends Verdict> =
  | { readonly kind: "pending"; readonly verdict: V }
  | { readonly kind: "fired"; readonly verdict: V }
  | { readonly kind: "dropped" }
  | { readonly kind: "retracted" | "resolved"; readonly verdict: V; readonly by: V | "stale"; readonly at: number };

interface Run<V> {
  readonly start: number;
  readonly end: number;
  /** Newest crossed verdict of the run. */
  readonly newest: V;
  readonly windows: number[];
}

export class SeriesAlert<V extends Verdict> {
  private verdicts: V[] = [];
  private current: AlertState = "inactive";
  private raisedBy = new Set<number>();
  /** Windows ending at or before this are past a silence that ended the series: they are not taken again. */
  private floor = -Infinity;
  /** Log time it became pending / fired. */
  activeAt = 0;
  firedAt = 0;
  /** The newest crossed verdict while active; the one that ended it afterwards. */
  latest: V | undefined;

  constructor(
    private readonly forMs: number,
    private readonly staleMs: number,
  ) {}

  get state(): AlertState {
    return this.current;
  }

  /** Newest window end with a verdict (−Infinity when none). */
  get newestEnd(): number {
    return this.verdicts.at(-1)?.end ?? -Infinity;
  }

  /** Takes the verdict of a window (replacing any earlier one of the same window). */
  record(v: V): Transition<V> | undefined {
    if (v.end <= this.floor || !this.upsert(v)) return undefined;
    return this.judge(v);
  }

  /** The scope's clock moved to window end `now` (log time `at`): a series silent for staleMs ends. */
  expire(now: number, at: number): Transition<V> | undefined {
    if (this.current === "inactive" || now - this.newestEnd < this.staleMs) return undefined;
    const was = this.current;
    const latest = this.latest as V;
    this.reset();
    this.floor = this.newestEnd;
    this.verdicts = [];
    return was === "pending" ? { kind: "dropped" } : { kind: "resolved", verdict: latest, by: "stale", at };
  }

  /** Forgets verdicts of windows ending at or before `end` (they no longer change the state). */
  forgetBefore(end: number): void {
    let k = 0;
    while (k < this.verdicts.length && (this.verdicts[k] as V).end <= end) k++;
    if (k > 0) this.verdicts.splice(0, k);
  }

  /** Keeps v as its window's verdict, unless it is an early pane below a window that crossed (early panes never end). */
  private upsert(v: V): boolean {
    const vs = this.verdicts;
    let i = vs.length;
    while (i > 0 && (vs[i - 1] as V).end > v.end) i--;
    const held = i > 0 && (vs[i - 1] as V).end === v.end ? (vs[i - 1] as V) : undefined;
    if (held && held.crossed && !v.crossed && !v.settled) return false;
    if (held) vs[i - 1] = v;
    else vs.splice(i, 0, v);
    return true;
  }

  private judge(v: V): Transition<V> | undefined {
    const run = this.run();
    if (this.current === "inactive") {
      if (!run) return undefined;
      this.activeAt = v.at;
      return this.advance(run, v);
    }
    if (run) {
      if (this.current === "pending") return this.advance(run, v);
      for (const w of run.windows) this.raisedBy.add(w);
      this.latest = run.newest;
      return undefined;
    }
    if (this.current === "pending") {
      this.reset();
      return { kind: "dropped" };
    }
    const raised = [...this.raisedBy];
    const settledCrossed = this.verdicts.some((x) => x.crossed && x.settled && this.raisedBy.has(x.end));
    const latest = this.latest as V;
    this.reset();
    this.latest = v;
    const retracted = !settledCrossed && v.settled && !v.crossed && raised.includes(v.end);
    return { kind: retracted ? "retracted" : "resolved", verdict: latest, by: v, at: v.at };
  }

  /** Pending → firing once the run spans forMs. */
  private advance(run: Run<V>, v: V): Transition<V> | undefined {
    for (const w of run.windows) this.raisedBy.add(w);
    this.latest = run.newest;
    if (run.end - run.start >= this.forMs) {
      this.current = "firing";
      this.firedAt = v.at;
      return { kind: "fired", verdict: run.newest };
    }
    if (this.current === "pending") return undefined;
    this.current = "pending";
    return { kind: "pending", verdict: run.newest };
  }

  /** The run of active windows that reaches the newest verdict, if the newest settled word keeps one. */
  private run(): Run<V> | undefined {
    let run: { start: number; end: number; newest: V; windows: number[] } | undefined;
    let last = -Infinity;
    for (const x of this.verdicts) {
      if (!x.crossed && !x.settled) continue;
      if (x.end - last > this.staleMs) run = undefined;
      last = x.end;
      if (!x.crossed) {
        run = undefined;
        continue;
      }
      if (!run) run = { start: x.end, end: x.end, newest: x, windows: [] };
      run.end = x.end;
      run.newest = x;
      run.windows.push(x.end);
    }
    return run;
  }

  private reset(): void {
    this.current = "inactive";
    this.raisedBy = new Set();
    this.activeAt = 0;
    this.firedAt = 0;
  }
}
