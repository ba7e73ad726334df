import type { PaneBias } from "@tidemark/engine/protocol";

/**
 * Window-weighted mean of two measured biases (null = not measured). Used by the server to
 * merge engine workers and by the app to combine services. Both sides measure the same policy
 * over their own last N closed windows, so the result reports the larger N, not the sum.
 * Pure: the server and the app share it.
 */
export function mergeBias(a: PaneBias, b: PaneBias): PaneBias {
  const windows = Math.max(a.windows, b.windows);
  const total = a.windows + b.windows;
  const mean = (x: number | null, y: number | null): number | null => {
    if (x === null || a.windows === 0) return y;
    if (y === null || b.windows === 0) return x;
    return (x * a.windows + y * b.windows) / total;
  };
  return {
    countPct: mean(a.countPct, b.countPct),
    errorRatePp: mean(a.errorRatePp, b.errorRatePp),
    p99Pct: mean(a.p99Pct, b.p99Pct),
    usersPct: mean(a.usersPct, b.usersPct),
    windows,
  };
}
