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
  /** Early panes: the age bucket, the elapsed fraction of the window at emission (see AGE_BUCKETS). */
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
 * Age buckets of early panes: the elapsed fraction of the window when the pane was emitted,
 * (emittedAt − start) / size; "1+" is after the window's end, before its on-time pane.
 */
export const AGE_BUCKETS = ["0-0.25", "0.25-0.5", "0.5-0.75", "0.75-1", "1+"] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];

/** The age bucket of an early pane emitted at log time `emittedAt` for window [start, end). */
export function ageBucketOf(start: number, end: number, emittedAt: number): AgeBucket {
  const f = (emittedAt - start) / (end - start);
  return f < 0.25 ? "0-0.25" : f < 0.5 ? "0.25-0.5" : f < 0.75 ? "0.5-0.75" : f < 1 ? "0.75-1" : "1+";
}
