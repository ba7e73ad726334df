/**
 * Sends the queue's batches one request at a time (docs/remote-write.md, "Retries"): accepted →
 * the newest samples recorded and saved, then the messages done are acknowledged; refused (4xx) →
 * logged, counted, dropped, acknowledged; 5xx/429/no answer → the same batch again after a backoff
 * with jitter (Retry-After honoured) until accepted, refused or the role stops (then it stays
 * unacknowledged and is read again on the next start).
 */
import type { Logger } from "pino";
import type { Answer } from "./http-sender.js";
import type { RemoteWriteMetrics } from "./remote-write-metrics.js";
import { outcomeOf, retryDelayMs, type Backoff } from "./retry-policy.js";
import type { Queued, WriteQueue } from "./write-queue.js";
import { writeRequestBody } from "./write-request.js";

export interface WriteLoopDeps {
  readonly queue: WriteQueue;
  readonly batchSize: number;
  readonly backoff: Backoff;
  readonly send: (body: Uint8Array) => Promise<Answer>;
  /** Persists the newest accepted samples (before any acknowledgement). */
  readonly save: () => void;
  readonly ack: (seqs: readonly number[]) => void;
  readonly metrics: RemoteWriteMetrics;
  readonly log: Logger;
  readonly random?: () => number;
}

export class WriteLoop {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private spaceWaiters: (() => void)[] = [];
  private interrupt: (() => void) | undefined;
  private highestSentMs = 0;

  constructor(private readonly d: WriteLoopDeps) {}

  /** New samples are queued. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Resolves once the queue is below its capacity (or the loop stopped). */
  async space(): Promise<void> {
    while (this.d.queue.full && !this.stopped) await new Promise<void>((r) => this.spaceWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    this.wake();
    this.interrupt?.();
    this.freeSpace();
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      const batch = this.d.queue.nextBatch(this.d.batchSize);
      if (batch.length === 0) {
        await new Promise<void>((r) => (this.wakeUp = r));
        this.wakeUp = undefined;
        continue;
      }
      await this.write(batch);
    }
  }

  /** One batch until it is accepted or refused (or the loop stops). */
  private async write(batch: Queued[]): Promise<void> {
    const { metrics, log } = this.d;
    const body = writeRequestBody(batch);
    for (let attempt = 0; !this.stopped; attempt++) {
      if (attempt > 0) metrics.retried.inc(batch.length);
      const timer = metrics.batchSeconds.startTimer();
      const answer = await this.d.send(body);
      timer();
      metrics.requests.inc({ code: answer.status === undefined ? "error" : String(answer.status) });
      const outcome = outcomeOf(answer.status);
      if (outcome.kind === "accepted") return this.done(batch, true);
      if (outcome.kind === "refused") {
        log.error(
          { status: answer.status, answer: answer.detail, samples: batch.length, first: labelsOf(batch[0]) },
          "the receiver refused a batch (not retried): its samples are dropped",
        );
        return this.done(batch, false);
      }
      const delayMs = retryDelayMs(attempt + 1, this.d.backoff, (this.d.random ?? Math.random)(), answer.retryAfterMs);
      log.warn(
        { status: answer.status ?? null, answer: answer.detail, attempt: attempt + 1, delayMs, samples: batch.length },
        "remote write failed; retrying",
      );
      await this.sleep(delayMs);
    }
  }

  private done(batch: readonly Queued[], accepted: boolean): void {
    const { queue, metrics } = this.d;
    queue.settle(batch, accepted);
    if (accepted) {
      metrics.samples.inc({ outcome: "sent" }, batch.length);
      this.highestSentMs = batch.reduce((m, s) => Math.max(m, s.ts), this.highestSentMs);
      metrics.highestSent.set(this.highestSentMs / 1000);
      this.d.save();
    } else metrics.samples.inc({ outcome: "failed" }, batch.length);
    this.d.ack(queue.takeDone());
    this.freeSpace();
  }

  private freeSpace(): void {
    if (this.d.queue.full && !this.stopped) return;
    const waiters = this.spaceWaiters;
    this.spaceWaiters = [];
    for (const w of waiters) w();
  }

  /** A backoff: ends early only when the loop stops. */
  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      this.interrupt = () => {
        clearTimeout(t);
        r();
      };
    });
    this.interrupt = undefined;
  }
}

function labelsOf(s: Queued | undefined): string {
  return s === undefined ? "" : `{${s.labels.map(([n, v]) => `${n}="${v}"`).join(",")}}`;
}
