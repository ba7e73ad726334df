/**
 * Measured bias as it travels on panes, status and frames (docs/semantics.md, "Measured bias"):
 * its type, its stages and the age buckets of early panes. Re-exported by `@tidemark/engine/protocol`.
 */

/**
 * Measured bias of a policy against the reference (docs/semantics.md, "Measured bias"); NaN-free:
 * null when unknown.
 */
export interface PaneBias {
  /** Mean count shortfall in % of the reference (positive = policy under-counts). */
  countPct: number | null;
  /** Mean signed error-rate difference, policy − reference, in percentage points. */
  errorRatePp: number | null;
  /** Mean p99 relative error in %. */
  p99Pct: number | null;
  /** Mean distinct-users shortfall in % of the reference (positive = policy under-counts users); null when not measured. */
  usersPct: number | null;
  /** Number of closed windows the means are taken over (provisional: windows compared so far). */
  windows: number;
  /**
   * Half-widths of the 95 % interval of each mean (Student t over the samples); null with fewer than
   * two samples. Absent on panes written before per-service bias (docs/semantics.md, "Measured bias").
   */
  spread?: BiasSpread;
  /** The stage this measurement is of: a pane carries its own stage's (absent on older panes). */
  stage?: BiasStage;
  /** Early panes: the age bucket at emission (see AGE_BUCKETS). */
  age?: AgeBucket;
  /** "service": measured for the pane's own service; "policy": the pooled figure of its policy and stage. */
  scope?: "service" | "policy";
  /** True while no reference window has closed for this scope: a lower bound against what the reference holds so far. */
  provisional?: boolean;
}

/** Half-widths of the 95 % interval of each bias mean; null when fewer than two samples. */
export interface BiasSpread {
  countPct: number | null;
  errorRatePp: number | null;
  p99Pct: number | null;
  usersPct: number | null;
}

/** Which emission of a window a bias is measured on. */
export type BiasStage = "early" | "on-time" | "late" | "final";

/**
 * Age buckets of early panes (docs/semantics.md, "Measured bias"). Before the window's end: the
 * elapsed fraction of the window at emission, (emittedAt − start) / size, in quarters. After it
 * (before the on-time pane): the early interval the pane fell in, k = ⌊(emittedAt − end) /
 * earlyEvery⌋ — "1+0" the first early pane after the end, "1+1" the next, "1+2", then "1+3+" for
 * every later one. Early panes after the end differ most from each other (each is a few seconds
 * closer to the watermark), so each gets its own bias.
 */
export const AGE_BUCKETS = ["0-0.25", "0.25-0.5", "0.5-0.75", "0.75-1", "1+0", "1+1", "1+2", "1+3+"] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];

/** Buckets for early panes after the window's end, one per early interval; the last is open. */
const AFTER_END: readonly AgeBucket[] = ["1+0", "1+1", "1+2", "1+3+"];

/** The age bucket of an early pane emitted at log time `emittedAt` for window [start, end) by a policy with early panes every `earlyEveryMs`. */
export function ageBucketOf(start: number, end: number, emittedAt: number, earlyEveryMs: number): AgeBucket {
  const f = (emittedAt - start) / (end - start);
  if (f < 1) return f < 0.25 ? "0-0.25" : f < 0.5 ? "0.25-0.5" : f < 0.75 ? "0.5-0.75" : "0.75-1";
  const k = earlyEveryMs > 0 ? Math.floor((emittedAt - end) / earlyEveryMs) : 0;
  return AFTER_END[Math.min(k, AFTER_END.length - 1)] as AgeBucket;
}
