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
  return new DemoSender(opts).run(signal);
}

type PendingBatch = Batch & { late: number };

class DemoSender {
  private readonly url: string;
  private readonly model: DemoModel;
  private readonly queue = new DelayQueue<{ event: DemoEvent; late: boolean }>();
  readonly stats: SenderStats = { generated: 0, accepted: 0, rejected: 0, late: 0, retries: 0, shed: 0, unsent: 0 };
  private readonly started = Date.now();
  private carry = 0;
  private last = this.started;
  private batchNo = 0;
  private retrying: PendingBatch | undefined;
  private pausedUntil = 0;
  private firstAccepted = false;
  private lastReport = { at: this.started, accepted: 0 };
  private lastRetryWhy = "";

  constructor(private readonly opts: SenderOptions) {
    this.url = new URL("/v1/events", opts.ingest).toString();
    this.model = new DemoModel({ seed: opts.seed, corr: opts.corr });
  }

  async run(signal: AbortSignal): Promise<SenderStats> {
    const tickMs = this.opts.tickMs ?? 200;
    const deadline = this.opts.durationMs === undefined ? Infinity : this.started + this.opts.durationMs;
    while (!signal.aborted && Date.now() < deadline) {
      const now = Date.now();
      this.generate(now);
      if (now >= this.pausedUntil) await this.flush(signal);
      this.report(now);
      await sleep(Math.max(0, tickMs - (Date.now() - now)), signal);
    }
    this.stats.unsent = this.queue.size + (this.retrying?.events.length ?? 0);
    return this.stats;
  }

  /** The events of the time since the last tick, held back until their send time. */
  private generate(now: number): void {
    this.carry += (this.opts.rate * (now - this.last)) / 1000;
    this.last = now;
    const n = Math.floor(this.carry);
    this.carry -= n;
    const maxQueued = this.opts.maxQueued ?? 2_000_000;
    for (const p of this.model.generate(now, n)) {
      if (this.queue.size >= maxQueued) this.stats.shed++;
      else this.queue.push(p.sendAt, { event: p.event, late: p.late });
    }
    this.stats.generated += n;
  }

  /** The batch being retried first, then everything due, in batches; stops at a retry. */
  private async flush(signal: AbortSignal): Promise<void> {
    if (this.retrying) await this.send(this.retrying);
    while (!this.retrying && !signal.aborted) {
      const due = this.queue.popDue(Date.now(), this.opts.maxBatch ?? 5000);
      if (due.length === 0) return;
      const id = `demo-${this.opts.seed}-${this.started}-${this.batchNo++}`;
      await this.send({ id, events: due.map((d) => d.event), late: due.filter((d) => d.late).length });
    }
  }

  private async send(batch: PendingBatch): Promise<void> {
    const outcome = await postBatch(this.url, this.opts.token, batch);
    if (outcome.kind === "accepted") {
      this.stats.accepted += outcome.accepted;
      this.stats.rejected += outcome.rejected;
      this.stats.late += batch.late;
      if (outcome.firstError) this.opts.log(`ingest rejected ${outcome.rejected} events, e.g.: ${outcome.firstError}`);
      this.retrying = undefined;
      if (!this.firstAccepted) {
        this.firstAccepted = true;
        this.opts.onFirstAccepted?.();
      }
    } else if (outcome.kind === "retry") {
      this.stats.retries++;
      this.retrying = batch;
      this.pausedUntil = Date.now() + outcome.afterMs;
      if (outcome.why !== this.lastRetryWhy) this.opts.log(`${outcome.why}; retrying in ${outcome.afterMs} ms`);
      this.lastRetryWhy = outcome.why;
    } else {
      const hint =
        outcome.status === 401
          ? " (pass the token printed by `tidemark up` with --token or TIDEMARK_INGEST_TOKENS)"
          : "";
      throw new DeployError(
        "TM_DEMO_REFUSED",
        `ingest refused a batch with ${outcome.status}: ${outcome.message}${hint}`,
      );
    }
  }

  private report(now: number): void {
    if (now - this.lastReport.at < (this.opts.reportEveryMs ?? 5000)) return;
    const s = this.stats;
    const rate = ((s.accepted - this.lastReport.accepted) * 1000) / (now - this.lastReport.at);
    this.opts.log(
      `${rate.toFixed(0)} events/s accepted (total ${s.accepted}, held back ${this.queue.size}, ` +
        `late ${pct(s.late, s.accepted)}, rejected ${s.rejected}, retries ${s.retries})`,
    );
    this.lastReport = { at: now, accepted: s.accepted };
  }
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
