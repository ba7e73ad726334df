/**
 * The live part of `tidemark load` (docs/operations.md, "`tidemark load`"): the only code with
 * the clock and HTTP. Every tick it asks the model for the events of the elapsed time, holds each
 * in the delay queue until its send time, and cuts what is due into batches for `senders`
 * concurrent senders (each its own keep-alive connection). At the end of the duration, events
 * still held back are sent at once; senders then have `drainMs` to get every batch answered.
 */
import { DDSketch } from "@tidemark/sketches";
import { DelayQueue } from "../demo/delay-queue.js";
import type { PlannedEvent } from "../demo/model.js";
import { cut, makeBatch, type LoadBatch } from "./batch.js";
import { Delivery } from "./delivery.js";
import { IngestClient } from "./ingest-client.js";
import type { LagTracker } from "./lag-tracker.js";
import { AcceptedLedger } from "./ledger.js";
import { LoadModel } from "./model.js";
import type { LoadOptions } from "./load-options.js";
import { Outbox } from "./outbox.js";
import { pause } from "./pause.js";
import { emptyCounters, progressLine, type LoadCounters } from "./report.js";

/** The run's settings: the command's, with its files opened and its lag source started. */
export interface LoadRunOptions extends Omit<LoadOptions, "nats" | "accepted" | "record"> {
  record: { write(chunk: string): Promise<void> } | undefined;
  lag: LagTracker | undefined;
  log: (line: string) => void;
  /** Events waiting for a sender at most (default: 5 s of the rate); past it batches are shed. */
  maxQueuedEvents?: number;
  tickMs?: number;
  progressEveryMs?: number;
  /** After the duration, how long senders may take to get the last batches answered. */
  drainMs?: number;
  unreachableAfterMs?: number;
}

export interface LoadResult {
  counters: LoadCounters;
  ledger: AcceptedLedger;
  /** Per answered POST, ms. */
  httpLatency: DDSketch;
  startedAt: number;
  /** When the last batch was answered or given up on. */
  endedAt: number;
  /** Set when ingest refused for good (TM_LOAD_REFUSED), never answered (TM_LOAD_UNREACHABLE), or --record failed. */
  failure: Error | undefined;
}

export async function runLoad(opts: LoadRunOptions, signal: AbortSignal): Promise<LoadResult> {
  return new LoadRun(opts).run(signal);
}

class LoadRun {
  private readonly counters = emptyCounters();
  private readonly ledger: AcceptedLedger;
  private readonly latency = new DDSketch();
  private readonly held = new DelayQueue<PlannedEvent>();
  private readonly outbox: Outbox<LoadBatch>;
  private readonly stop = new AbortController();
  private readonly client: IngestClient;
  private readonly startedAt = Date.now();
  private readonly model: LoadModel;
  private failure: Error | undefined;
  private generating = true;
  private inFlight = 0;
  private batchNo = 0;
  /** Senders waiting for a batch. */
  private idle: Array<() => void> = [];
  private lastProgress = { at: this.startedAt, accepted: 0 };

  constructor(private readonly opts: LoadRunOptions) {
    this.ledger = new AcceptedLedger(opts.windowMs);
    this.outbox = new Outbox(opts.maxQueuedEvents ?? Math.max(opts.rate * 5, opts.batch * opts.senders * 2));
    this.client = new IngestClient(opts.ingest, opts.token, opts.senders);
    this.model = new LoadModel({ ...opts, startMs: this.startedAt });
  }

  async run(signal: AbortSignal): Promise<LoadResult> {
    const delivery = new Delivery({
      client: this.client,
      counters: this.counters,
      ledger: this.ledger,
      latency: this.latency,
      record: this.opts.record,
      log: this.opts.log,
      startedAt: this.startedAt,
      ingest: this.opts.ingest,
      unreachableAfterMs: this.opts.unreachableAfterMs ?? 10_000,
      stop: this.stop.signal,
      fail: (err) => this.fail(err),
    });
    const progress = setInterval(() => this.progress(), this.opts.progressEveryMs ?? 1000);
    const senders = Array.from({ length: this.opts.senders }, () => this.sender(delivery));
    try {
      await this.generate(signal);
      await this.drain(Promise.all(senders));
    } finally {
      clearInterval(progress);
      this.client.close();
    }
    return {
      counters: this.counters,
      ledger: this.ledger,
      httpLatency: this.latency,
      startedAt: this.startedAt,
      endedAt: Date.now(),
      failure: this.failure,
    };
  }

  /** Ticks until the duration is over (or a stop), then sends what is still held back. */
  private async generate(signal: AbortSignal): Promise<void> {
    const end = this.startedAt + this.opts.durationMs;
    const tickMs = this.opts.tickMs ?? 50;
    for (;;) {
      const now = Date.now();
      const over = now >= end || signal.aborted || this.stop.signal.aborted;
      for (const p of this.model.generate(Math.min(now, end))) {
        this.counters.generated++;
        if (p.late) this.counters.late++;
        this.held.push(p.sendAt, p);
      }
      if (over) break;
      this.enqueue(this.held.popDue(now));
      await pause(Math.max(1, tickMs - (Date.now() - now)), signal);
    }
    // The end-of-run flush: events still held back go now, their lateness shortened.
    const rest = this.held.popDue(Number.POSITIVE_INFINITY);
    if (this.stop.signal.aborted) this.counters.unsent += rest.length;
    else this.enqueue(rest);
    this.generating = false;
    this.wakeAll();
  }

  private enqueue(due: PlannedEvent[]): void {
    if (due.length === 0) return;
    for (const items of cut(due, this.opts.batch)) {
      const key = `load-${this.opts.seed}-${this.startedAt}-${this.batchNo++}`;
      this.outbox.offer(makeBatch(key, items));
    }
    this.counters.shed = this.outbox.shedEvents;
    this.wakeAll();
  }

  /** Posts batches until none is left and none will come. */
  private async sender(delivery: Delivery): Promise<void> {
    for (;;) {
      if (this.stop.signal.aborted) return;
      const b = this.outbox.take();
      if (b === undefined) {
        if (!this.generating) return;
        await new Promise<void>((resolve) => this.idle.push(resolve));
        continue;
      }
      this.inFlight++;
      try {
        await delivery.deliver(b);
      } catch (err) {
        this.counters.unsent += b.events.length;
        this.fail(err as Error);
      } finally {
        this.inFlight--;
      }
    }
  }

  private wakeAll(): void {
    for (const wake of this.idle.splice(0)) wake();
  }

  /** Waits for the senders; past `drainMs` gives up on what is left (counted as unsent). */
  private async drain(senders: Promise<unknown>): Promise<void> {
    const drainMs = this.opts.drainMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), drainMs)));
    const outcome = await Promise.race([senders, late]);
    clearTimeout(timer);
    if (outcome === "late") {
      this.opts.log(`gave up after waiting ${drainMs / 1000} s for the last batches to be answered`);
      this.stop.abort();
      this.client.close();
    }
    await senders;
    for (const b of this.outbox.drain()) this.counters.unsent += b.events.length;
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.stop.abort();
    this.wakeAll();
  }

  private progress(): void {
    const now = Date.now();
    const accepted = this.counters.accepted;
    const line = progressLine({
      elapsedMs: now - this.startedAt,
      rate: this.opts.rate,
      acceptedPerSec: ((accepted - this.lastProgress.accepted) * 1000) / Math.max(1, now - this.lastProgress.at),
      accepted,
      inFlight: this.inFlight,
      queued: this.outbox.queuedEvents,
      held: this.held.size,
      retries: this.counters.retries,
      shed: this.counters.shed,
      lag: this.opts.lag?.worst(),
    });
    this.lastProgress = { at: now, accepted };
    this.opts.log(line);
  }
}
