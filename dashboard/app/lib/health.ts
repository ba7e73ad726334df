import type { WorkerStatus } from "../../protocol/ws-frames.js";

/**
 * A partition this far behind the most advanced one (log time) is stalled when it is not idle,
 * or when the engine names it in `heldBackBy` even though idle: its merge then waits for a
 * partition that sent nothing at all (docs/operations.md, "Partition ownership").
 */
export const STALL_MS = 5000;

export interface PartitionRow {
  partition: number;
  logTime: number | null;
  /** How far behind the most advanced partition, ms (null when unknown). */
  behindMs: number | null;
  lastSeq: number;
  idle: boolean;
  stalled: boolean;
  /** This partition holds the global watermark back. */
  holds: boolean;
}

export interface WorkerHealth {
  worker: string;
  partitions: PartitionRow[];
  /** A one-line alarm, or null when healthy. */
  alarm: string | null;
}

/** `serverTime`: the dashboard server's clock when it sent the status (receivedAt is on that clock). */
export function workerHealth(w: WorkerStatus, serverTime: number): WorkerHealth {
  const times = w.partitions.map((p) => p.logTime).filter((t): t is number => t !== null);
  const newest = times.length > 0 ? Math.max(...times) : null;
  const partitions = w.partitions.map((p) => {
    const behindMs = newest === null || p.logTime === null ? null : newest - p.logTime;
    const holds = p.partition === w.heldBackBy;
    const stalled = (!p.idle || holds) && (p.logTime === null ? newest !== null : (behindMs ?? 0) >= STALL_MS);
    return {
      partition: p.partition,
      logTime: p.logTime,
      behindMs,
      lastSeq: p.lastSeq,
      idle: p.idle,
      stalled,
      holds,
    };
  });
  return { worker: w.worker, partitions, alarm: alarmOf(w, partitions, serverTime) };
}

function alarmOf(w: WorkerStatus, rows: readonly PartitionRow[], now: number): string | null {
  if (w.stale) return `Engine ${w.worker} has not reported for ${Math.round((now - w.receivedAt) / 1000)} s`;
  if (w.merge !== undefined) return mergeAlarm(w, rows);
  const stalled = rows.filter((r) => r.stalled).sort((a, b) => Number(b.holds) - Number(a.holds));
  const first = stalled[0];
  if (!first) return null;
  const behind = first.behindMs === null ? "has shown no message" : `is ${Math.round(first.behindMs / 1000)} s behind`;
  const others = stalled.length > 1 ? ` (${stalled.length} partitions stalled)` : "";
  return `Watermark stalled: partition ${first.partition} ${behind} and holds it back${others}`;
}

/**
 * A merge operator's status names the partition holding the merged watermark back and the worker
 * that reported it (docs/operations.md, "Merge stage"): the upstream worker to look at.
 */
function mergeAlarm(w: WorkerStatus, rows: readonly PartitionRow[]): string | null {
  const row = rows.find((r) => r.partition === w.heldBackBy);
  if (!row) return null;
  const behind = row.behindMs === null ? "has reported nothing" : `is ${Math.round(row.behindMs / 1000)} s behind`;
  const worker = w.merge?.heldBackByWorker ?? "no worker yet";
  return `Merge stage held back by worker ${worker}: its partition ${row.partition} ${behind}`;
}

/**
 * The pipeline-lag percentiles when the engine reports them (a `pipelineLag` block with p50 and
 * p99, ms); null for engines that send only `pipelineLagMs`. Read tolerantly: any other shape is
 * treated as absent.
 */
export function lagPercentiles(w: WorkerStatus): { p50: number | null; p99: number | null } | null {
  const lag = (w as { pipelineLag?: unknown }).pipelineLag;
  if (typeof lag !== "object" || lag === null) return null;
  const ms = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const { p50, p99 } = lag as { p50?: unknown; p99?: unknown };
  if (ms(p50) === null && ms(p99) === null) return null;
  return { p50: ms(p50), p99: ms(p99) };
}
