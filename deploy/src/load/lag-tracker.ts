/**
 * The engine's pipeline lag as `tidemark load` reports it (docs/operations.md, "`tidemark
 * load`", "Output"): from each worker's `tm.status` (`EngineStatusMessage.pipelineLag`, p50
 * and p99 over the worker's last minute), the worst worker's latest figures and the largest p99
 * any worker reported during the run. Pure.
 */
import type { EngineStatusMessage } from "@tidemark/engine/protocol";

export interface WorkerLag {
  worker: string;
  p50: number | null;
  p99: number | null;
}

export class LagTracker {
  private readonly latest = new Map<string, WorkerLag>();
  private max: number | null = null;
  private messages = 0;

  observe(status: Pick<EngineStatusMessage, "worker" | "pipelineLag">): void {
    const lag = status.pipelineLag;
    if (typeof status.worker !== "string" || lag === undefined) return;
    this.messages++;
    const p99 = finite(lag.p99);
    this.latest.set(status.worker, { worker: status.worker, p50: finite(lag.p50), p99 });
    if (p99 !== null && (this.max === null || p99 > this.max)) this.max = p99;
  }

  /** The worker whose latest p99 is the largest (ties: by name), or undefined before any status. */
  worst(): WorkerLag | undefined {
    let worst: WorkerLag | undefined;
    for (const w of [...this.latest.values()].sort((a, b) => a.worker.localeCompare(b.worker))) {
      if (worst === undefined || (w.p99 ?? -1) > (worst.p99 ?? -1)) worst = w;
    }
    return worst;
  }

  get maxP99(): number | null {
    return this.max;
  }

  /** Workers heard from so far. */
  get workers(): number {
    return this.latest.size;
  }

  /** Status messages with a pipeline lag seen so far. */
  get seen(): number {
    return this.messages;
  }
}

function finite(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}
