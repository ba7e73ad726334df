import {
  AGE_BUCKETS,
  type BiasStage,
  type LatenessCorrelation,
  type ServiceDial,
  type StageBias,
} from "@tidemark/engine/protocol";
import { mergeBias } from "../protocol/bias.js";

/**
 * Merging one policy's dial over engine workers (docs/websocket-protocol.md, "Server → client"):
 * each worker measures the same policy over its own last N windows, so biases merge as
 * `mergeBias` does (weighted by windows, reporting the larger N), never summed.
 */

/** Pooled stage biases, merged per (window size, stage, age); the emit delay is the largest. */
export function mergeStages(into: Map<string, StageBias>, stages: readonly StageBias[] | undefined): void {
  for (const s of stages ?? []) {
    const key = `${s.windowMs}|${s.stage}|${s.age ?? ""}`;
    const held = into.get(key);
    into.set(
      key,
      held
        ? { ...held, bias: mergeBias(held.bias, s.bias), emitDelayMs: maxOf(held.emitDelayMs, s.emitDelayMs) }
        : { ...s, bias: { ...s.bias } },
    );
  }
}

/** Per-service dials, merged per (service, window size). */
export function mergeServices(into: Map<string, ServiceDial>, dials: readonly ServiceDial[] | undefined): void {
  for (const d of dials ?? []) {
    const key = `${d.service}|${d.windowMs}`;
    const held = into.get(key);
    into.set(
      key,
      held
        ? {
            ...held,
            onTime: mergeBias(held.onTime, d.onTime),
            final: mergeBias(held.final, d.final),
            lateness: largerSample(held.lateness, d.lateness),
          }
        : { ...d },
    );
  }
}

/**
 * Two workers' lateness correlations of one service cover overlapping windows (a service moved
 * between workers), so their counts are not added: the one over more events is kept whole, its
 * test and flag with it.
 */
function largerSample(a: LatenessCorrelation, b: LatenessCorrelation): LatenessCorrelation {
  return b.onTimeEvents + b.lateEvents > a.onTimeEvents + a.lateEvents ? b : a;
}

const STAGE_RANK: Record<BiasStage, number> = { early: 0, "on-time": 1, late: 2, final: 3 };

/** Window size, then the order a window's panes come in (early by age), so the frontier joins them in order. */
export function stageOrder(a: StageBias, b: StageBias): number {
  return (
    a.windowMs - b.windowMs ||
    STAGE_RANK[a.stage] - STAGE_RANK[b.stage] ||
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
