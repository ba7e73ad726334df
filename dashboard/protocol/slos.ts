/**
 * What the dashboard server says about each SLO (docs/slo.md, "Dashboard panel"): its objective,
 * the budget left over its period with the interval, the time to exhaustion, and every tier's long
 * and short burn rates, raw and corrected, with the bias, may_flip and whether its alert fires.
 * Served in the `alerts` frame and `GET /api/alerts` (`slos`). Times are log time, ms since epoch.
 */

export interface SloWindowView {
  /** e.g. "1h", "5m". */
  window: string;
  requests: number;
  raw: number;
  corrected: number;
  /** Half-width of the corrected burn rate's 95 % interval; null while some pane's bias is unmeasured. */
  halfWidth: number | null;
  /** Count-weighted measured bias of the window's panes, pp (policy − reference); null when none. */
  biasPp: number | null;
}

export interface SloTierView {
  severity: "page" | "ticket";
  factor: number;
  long: SloWindowView;
  short: SloWindowView;
  /** Corrected burn rates above the factor in both windows, the traffic floor met. */
  crossed: boolean;
  mayFlip: boolean;
  provisional: boolean;
  /** The tier crosses and its severity's SLOBurnRate alert is firing. */
  firing: boolean;
}

export interface SloView {
  name: string;
  service: string;
  policy: string;
  objective: number;
  /** e.g. "30d". */
  period: string;
  /** "errors", or "latency > 300 ms". */
  sli: string;
  /** The window end read; null before any pane. */
  at: number | null;
  /** Why the SLO cannot be read, when it cannot (e.g. no exact latency counts for its threshold); null otherwise. */
  status: string | null;
  budget: {
    /** Corrected budget left, 1 − burn over the period; below 0 when overspent. */
    remaining: number;
    remainingRaw: number;
    halfWidth: number | null;
    /** The period the budget is over: [from, to]; counted from `countedFrom` (the oldest window held). */
    from: number | null;
    to: number | null;
    countedFrom: number | null;
    /** Period time until the budget is spent at the first tier's long corrected burn rate; null: never. */
    exhaustionMs: number | null;
    exhaustion: string;
  };
  tiers: SloTierView[];
  /** Each severity's SLOBurnRate alert state. */
  alerts: Record<string, "inactive" | "pending" | "firing">;
}
