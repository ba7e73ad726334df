import {
  AGE_BUCKETS,
  poolBias,
  type BiasStage,
  type LatenessCorrelation,
  type ServiceDial,
  type StageBias,
} from "@tidemark/engine/protocol";

/**
 * Pooling one policy's dial over engine workers (docs/websocket-protocol.md, "Server → client"):
 * each worker measures the same policy over its own last N windows, so biases pool as
 * `poolBias` does (weighted by windows, reporting the largest N), never summed.
 */

/** Pooled biases per pane kind (`stages` on the wire), grouped per (window size, kind, age); the emit delay is the largest. */
export function poolKinds(workers: ReadonlyArray<readonly StageBias[] | undefined>): StageBias[] {
  const groups = groupBy(workers, (s) => `${s.windowMs}|${s.stage}|${s.age ?? ""}`);
  return [...groups.values()].map((g) => ({
    ...(g[0] as StageBias),
    bias: poolBias(g.map((s) => s.bias)),
    emitDelayMs: g.map((s) => s.emitDelayMs).reduce(maxOf),
  }));
}

/** Per-service dials, pooled per (service, window size). */
export function poolServices(workers: ReadonlyArray<readonly ServiceDial[] | undefined>): ServiceDial[] {
  const groups = groupBy(workers, (d) => `${d.service}|${d.windowMs}`);
  return [...groups.values()].map((g) => ({
    ...(g[0] as ServiceDial),
    onTime: poolBias(g.map((d) => d.onTime)),
    final: poolBias(g.map((d) => d.final)),
    lateness: g.map((d) => d.lateness).reduce(largerSample),
  }));
}

function groupBy<T>(lists: ReadonlyArray<readonly T[] | undefined>, key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const list of lists)
    for (const x of list ?? []) {
      const k = key(x);
      const g = out.get(k);
      if (g) g.push(x);
      else out.set(k, [x]);
    }
  return out;
}

/**
 * Two workers' lateness correlations of one service cover overlapping windows (a service moved
 * between workers), so their counts are not added: the one over more events is kept whole, its
 * test and flag with it.
 */
function largerSample(a: LatenessCorrelation, b: LatenessCorrelation): LatenessCorrelation {
  return b.onTimeEvents + b.lateEvents > a.onTimeEvents + a.lateEvents ? b : a;
}

/** The pane kinds in the order a window's panes come in (`BiasStage`: the kind's wire name). */
const KIND_RANK: Record<BiasStage, number> = { early: 0, "on-time": 1, late: 2, final: 3 };

/** Window size, then the order a window's panes come in (early by age), so the frontier joins them in order. */
export function kindOrder(a: StageBias, b: StageBias): number {
  return (
    a.windowMs - b.windowMs ||
    KIND_RANK[a.stage] - KIND_RANK[b.stage] ||
    AGE_BUCKETS.indexOf(a.age ?? "0-0.25") - AGE_BUCKETS.indexOf(b.age ?? "0-0.25")
  );
}

export function serviceOrder(a: ServiceDial, b: ServiceDial): number {
  return a.service.localeCompare(b.service) || a.windowMs - b.windowMs;
}

export function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
