/**
 * The demo's sender: the only part that reads the clock and talks HTTP. Every tick it asks the
 * model for the events of the elapsed time, holds each in the delay queue until its send time,
 * and posts what is due in NDJSON batches. 429/503 pause it for Retry-After and the same batch
 * (same Idempotency-Key) is sent again; everything generated meanwhile waits in the queue.
 */
import { DeployError } from "../errors.js";
import { DelayQueue } from "./delay-queue.js";
import { DemoModel, type DemoEvent } from "./model.js";
import { postBatch, type Batch } from "./post-batch.js";

export interface SenderOptions {
  /** Base URL of ingest, e.g. http://127.0.0.1:4318. */
  ingest: string;
  token: string | undefined;
  /** Events per second generated. */
  rate: number;
  corr: number;
  seed: number;
  /** Stop after this long; undefined = until aborted. */
  durationMs: number | undefined;
  tickMs?: number;
  maxBatch?: number;
  /** Rate report every this many ms. */
  reportEveryMs?: number;
  /** Events held back at most; beyond it new events are shed (and counted). */
  maxQueued?: number;
  log: (line: string) => void;
  /** Called once, when ingest first accepts a batch. */
  onFirstAccepted?: () => void;
}

export interface SenderStats {
  generated: number;
  accepted: number;
  rejected: number;
  /** Accepted events that were held back in the late tail. */
  late: number;
  retries: number;
  shed: number;
  /** Still held back when the sender stopped. */
  unsent: number;
}

export async function runSender(opts: SenderOptions, signal: AbortSignal): Promise<SenderStats> {
  const tickMs = opts.tickMs ?? 200;
  const maxBatch = opts.maxBatch ?? 5000;
  const maxQueued = opts.maxQueued ?? 2_000_000;
  const url = new URL("/v1/events", opts.ingest).toString();
  const model = new DemoModel({ seed: opts.seed, corr: opts.corr });
  const queue = new DelayQueue<{ event: DemoEvent; late: boolean }>();
  const stats: SenderStats = { generated: 0, accepted: 0, rejected: 0, late: 0, retries: 0, shed: 0, unsent: 0 };
  const started = Date.now();
  const deadline = opts.durationMs === undefined ? Infinity : started + opts.durationMs;
  let carry = 0;
  let last = started;
  let batchNo = 0;
  let retrying: (Batch & { late: number }) | undefined;
  let pausedUntil = 0;
  let firstAccepted = false;
  let lastReport = { at: started, accepted: 0 };
  let lastRetryWhy = "";

  const send = async (batch: Batch & { late: number }): Promise<void> => {
    const outcome = await postBatch(url, opts.token, batch);
    if (outcome.kind === "accepted") {
      stats.accepted += outcome.accepted;
      stats.rejected += outcome.rejected;
      stats.late += batch.late;
      if (outcome.firstError) opts.log(`ingest rejected ${outcome.rejected} events, e.g.: ${outcome.firstError}`);
      retrying = undefined;
      if (!firstAccepted) {
        firstAccepted = true;
        opts.onFirstAccepted?.();
      }
    } else if (outcome.kind === "retry") {
      stats.retries++;
      retrying = batch;
      pausedUntil = Date.now() + outcome.afterMs;
      if (outcome.why !== lastRetryWhy) opts.log(`${outcome.why}; retrying in ${outcome.afterMs} ms`);
      lastRetryWhy = outcome.why;
    } else {
      const hint = outcome.status === 401 ? " (pass the token printed by `tidemark up` with --token or TIDEMARK_INGEST_TOKENS)" : "";
      throw new DeployError("TM_DEMO_REFUSED", `ingest refused a batch with ${outcome.status}: ${outcome.message}${hint}`);
    }
  };

  while (!signal.aborted && Date.now() < deadline) {
    const now = Date.now();
    carry += (opts.rate * (now - last)) / 1000;
    last = now;
    const n = Math.floor(carry);
    carry -= n;
    for (const p of model.generate(now, n)) {
      if (queue.size >= maxQueued) stats.shed++;
      else queue.push(p.sendAt, { event: p.event, late: p.late });
    }
    stats.generated += n;
    if (now >= pausedUntil) {
      if (retrying) await send(retrying);
      while (!retrying && !signal.aborted) {
        const due = queue.popDue(Date.now(), maxBatch);
        if (due.length === 0) break;
        const batch = { id: `demo-${opts.seed}-${started}-${batchNo++}`, events: due.map((d) => d.event), late: due.filter((d) => d.late).length };
        await send(batch);
      }
    }
    if (now - lastReport.at >= (opts.reportEveryMs ?? 5000)) {
      const rate = ((stats.accepted - lastReport.accepted) * 1000) / (now - lastReport.at);
      opts.log(
        `${rate.toFixed(0)} events/s accepted (total ${stats.accepted}, held back ${queue.size}, ` +
          `late ${pct(stats.late, stats.accepted)}, rejected ${stats.rejected}, retries ${stats.retries})`,
      );
      lastReport = { at: now, accepted: stats.accepted };
    }
    await sleep(Math.max(0, tickMs - (Date.now() - now)), signal);
  }
  stats.unsent = queue.size + (retrying?.events.length ?? 0);
  return stats;
}

function pct(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(1)}%`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
