import type { EngineStatusMessage, Pane } from "@tidemark/engine/protocol";
import { mergeBias } from "../protocol/bias.js";
import type { DashboardStatus, FeedStatus, FrontierPoint, WorkerStatus } from "../protocol/ws-frames.js";

/** A worker that sent no status for this long is shown as stale. */
export const STALE_AFTER_MS = 5000;

/**
 * The latest engine status per worker, and the frontier derived from it
 * (docs/websocket-protocol.md, "Server → client").
 */
export class StatusBoard {
  private readonly workers = new Map<string, { msg: EngineStatusMessage; receivedAt: number }>();

  update(msg: EngineStatusMessage, receivedAt: number): void {
    this.workers.set(msg.worker, { msg, receivedAt });
  }

  view(now: number, feed: FeedStatus, newestPanes: Map<string, Pane>): DashboardStatus {
    const workers: WorkerStatus[] = [...this.workers.values()]
      .map(({ msg, receivedAt }) => ({ ...msg, receivedAt, stale: now - receivedAt > STALE_AFTER_MS }))
      .sort((a, b) => a.worker.localeCompare(b.worker));
    return { serverTime: now, feed: { ...feed }, workers, frontier: frontier(workers, newestPanes) };
  }
}

/**
 * Per policy: emit delay against measured bias. Engine status is preferred (bias over all keys,
 * merged across workers by their window counts); policies only seen in panes use their newest
 * on-time/late/final pane.
 */
export function frontier(workers: readonly EngineStatusMessage[], newestPanes: Map<string, Pane>): FrontierPoint[] {
  const points = new Map<string, FrontierPoint>();
  for (const w of workers) {
    for (const p of w.policies) {
      const prev = points.get(p.name);
      points.set(p.name, {
        policy: p.name,
        label: p.label,
        strategy: p.strategy,
        graceMs: p.graceMs,
        emitDelayMs: maxOf(prev?.emitDelayMs ?? null, p.emitDelayMs),
        pipelineLagMs: maxOf(prev?.pipelineLagMs ?? null, w.pipelineLagMs),
        bias: prev ? mergeBias(prev.bias, p.bias) : { ...p.bias },
        source: "status",
      });
    }
  }
  for (const [policy, pane] of newestPanes) {
    if (points.has(policy)) continue;
    points.set(policy, {
      policy,
      label: policy,
      strategy: "",
      graceMs: null,
      emitDelayMs: pane.emitDelayMs,
      pipelineLagMs: pane.pipelineLagMs,
      bias: { ...pane.bias },
      source: "panes",
    });
  }
  return [...points.values()].sort(
    (a, b) => (a.emitDelayMs ?? 0) - (b.emitDelayMs ?? 0) || a.policy.localeCompare(b.policy),
  );
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
