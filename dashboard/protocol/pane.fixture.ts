import type { Pane } from "@tidemark/engine/protocol";

/** Test panes (server and app unit tests): defaults for every field, overrides by name. Not built. */
export interface PaneSpec {
  policy?: string;
  service?: string;
  route?: string;
  windowMs?: number;
  start?: number;
  seq?: number;
  kind?: Pane["kind"];
  count?: number;
  errors?: number;
  emittedAt?: number;
  emitDelayMs?: number;
  pipelineLagMs?: number;
  bias?: Pane["bias"];
  nowcast?: Pane["nowcast"];
}

export function testPane(s: PaneSpec = {}): Pane {
  const { policy = "dashboard", service = "api", route, windowMs = 10_000, start = 0, count = 1, errors = 0 } = s;
  return {
    id: `${policy}|${service}${route === undefined ? "" : `|${route}`}|${windowMs}|${start}`,
    seq: s.seq ?? 0,
    kind: s.kind ?? "on-time",
    policy,
    key: route === undefined ? { service } : { service, route },
    window: { start, end: start + windowMs },
    value: {
      count,
      errors,
      errorRate: count === 0 ? 0 : errors / count,
      p50: 20,
      p90: 80,
      p95: 120,
      p99: 410,
      p999: 600,
      users: 40,
    },
    watermark: start + windowMs,
    emittedAt: s.emittedAt ?? start + windowMs + 2000,
    emitDelayMs: s.emitDelayMs ?? 2000,
    pipelineLagMs: s.pipelineLagMs ?? 35,
    lateAccepted: 0,
    dropped: 0,
    bias: s.bias ?? { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0 },
    ...(s.nowcast ? { nowcast: s.nowcast } : {}),
  };
}
