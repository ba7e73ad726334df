/** Panes for the SLO tests: one (policy, service) pane of window i (10 s) with the counts given. */
import type { Pane, PaneKind } from "@tidemark/engine/protocol";

export const W = 10_000;
export const T0 = Date.UTC(2026, 0, 1);

export interface PaneCounts {
  count: number;
  errors: number;
  /** Threshold (ms) → requests slower than it; absent: the engine counts no threshold. */
  latencyAbove?: Record<string, number>;
}

let seq = 0;

export function slopane(
  i: number,
  kind: PaneKind,
  c: PaneCounts,
  opts: { service?: string; policy?: string; emittedAt?: number; t0?: number } = {},
): Pane {
  const service = opts.service ?? "checkout";
  const policy = opts.policy ?? "alerting";
  const start = (opts.t0 ?? T0) + i * W;
  const emittedAt = opts.emittedAt ?? (kind === "early" ? start + W / 2 : start + W + 1000);
  return {
    id: `${policy}|${service}|${W}|${start}`,
    seq: ++seq,
    kind,
    policy,
    key: { service },
    window: { start, end: start + W },
    value: {
      count: c.count,
      errors: c.errors,
      errorRate: c.count ? c.errors / c.count : 0,
      p50: 1,
      p90: 1,
      p95: 1,
      p99: 1,
      p999: 1,
      users: 1,
      ...(c.latencyAbove ? { latencyAbove: c.latencyAbove } : {}),
    },
    watermark: emittedAt,
    emittedAt,
    emitDelayMs: emittedAt - start - W,
    pipelineLagMs: 0,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
  };
}
