import { poolBias, type EngineStatusMessage, type Pane, type PolicyStatusWire } from "@tidemark/engine/protocol";
import type { DashboardStatus, FeedStatus, FrontierPoint, WorkerStatus } from "../protocol/ws-frames.js";
import { kindOrder, maxOf, poolKinds, poolServices, serviceOrder } from "./dial-pool.js";

/** A worker that sent no status for this long is shown as stale. */
export const STALE_AFTER_MS = 5000;

/**
 * The latest engine status per worker, and the frontier derived from it
 * (docs/websocket-protocol.md, "Server → client").
 */
export class StatusBoard {
  private readonly workers = new Map<string, { msg: EngineStatusMessage; receivedAt: number }>();

  update(msg: EngineStatusMessage, receivedAt: number): void {
    this.workers.set(operatorIdOf(msg), { msg, receivedAt });
  }

  view(now: number, feed: FeedStatus, newestPanes: Map<string, Pane>): DashboardStatus {
    const messages = [...this.workers.values()].sort((a, b) => operatorIdOf(a.msg).localeCompare(operatorIdOf(b.msg)));
    const workers: WorkerStatus[] = messages.map(({ msg, receivedAt }) => ({
      ...msg,
      // The per-kind (`stages`) and per-service dials travel once, pooled, in the frontier.
      policies: msg.policies.map(({ stages: _s, services: _d, ...p }) => p),
      receivedAt,
      stale: now - receivedAt > STALE_AFTER_MS,
    }));
    return {
      serverTime: now,
      feed: { ...feed },
      workers,
      frontier: frontier(
        messages.map((m) => m.msg),
        newestPanes,
      ),
    };
  }
}

/**
 * Per policy: emit delay against measured bias. Engine status is preferred (bias over all keys,
 * pooled across workers by their window counts; kind (`stages`) and service dials likewise); policies only
 * seen in panes use their newest on-time/late/final pane.
 */
export function frontier(workers: readonly EngineStatusMessage[], newestPanes: Map<string, Pane>): FrontierPoint[] {
  const points = new Map<string, FrontierPoint>();
  const dials = new Map<string, PolicyStatusWire[]>();
  // A merge operator's dials are its all-services key's, carried by its own panes: the pooled dial
  // is the workers' (docs/decisions/0030-all-services-panes-in-the-dashboard.md).
  for (const w of workers) {
    if (w.merge !== undefined) continue;
    for (const p of w.policies) {
      const prev = points.get(p.name);
      points.set(p.name, {
        policy: p.name,
        label: p.label,
        strategy: p.strategy,
        graceMs: p.graceMs,
        emitDelayMs: maxOf(prev?.emitDelayMs ?? null, p.emitDelayMs),
        pipelineLagMs: maxOf(prev?.pipelineLagMs ?? null, w.pipelineLagMs),
        bias: p.bias,
        source: "status",
        stages: [],
        services: [],
      });
      getOrAdd(dials, p.name).push(p);
    }
  }
  for (const point of points.values()) {
    const of = dials.get(point.policy) ?? [];
    point.bias = poolBias(of.map((p) => p.bias));
    point.stages = poolKinds(of.map((p) => p.stages)).sort(kindOrder);
    point.services = poolServices(of.map((p) => p.services)).sort(serviceOrder);
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
      stages: [],
      services: [],
    });
  }
  return [...points.values()].sort(
    (a, b) => (a.emitDelayMs ?? 0) - (b.emitDelayMs ?? 0) || a.policy.localeCompare(b.policy),
  );
}

function getOrAdd<V>(m: Map<string, V[]>, key: string): V[] {
  let v = m.get(key);
  if (!v) m.set(key, (v = []));
  return v;
}

/** The operator's id: `operatorId`, or `worker` from engines before it (docs/decisions/0045-operator-host.md). */
function operatorIdOf(msg: EngineStatusMessage): string {
  return msg.operatorId ?? msg.worker;
}
