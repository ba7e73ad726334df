/**
 * The SLOs' budget ledgers persisted in JetStream (docs/slo.md, "Error budget"): stream
 * TM_SLO_BUDGET, one subject per (SLO, hour) holding its newest message only (max_msgs_per_subject
 * 1), bounded by message count (Σ over the SLOs of period / 1 h + 2) and by age (the longest period
 * + 2 h: nats-server 2.9 has no per-message TTL, so pruned hours are also purged by subject).
 * `restore` reads every hour back into the ledgers before the TM_PANES feed starts; `flushed`
 * writes the hours the last flush changed, one publish at a time, retrying a failure.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from "@nats-io/jetstream";
import { STREAM_PANES } from "@tidemark/engine/protocol";
import type { Logger } from "pino";
import { within } from "../within.js";
import { HOUR_MS, type BudgetLedger } from "./budget-ledger.js";
import { budgetSubject, decodeHour, encodeHour, STREAM_SLO_BUDGET, SUBJECT_SLO_BUDGET } from "./budget-codec.js";

const NS_PER_MS = 1_000_000;
/** Messages per fetch of the restore, and how long a fetch waits for them. */
const FETCH_BATCH = 1000;
const FETCH_EXPIRES_MS = 2000;
/** How long a close waits for pending writes, then for the connection. */
const CLOSE_WAIT_MS = 2000;

export interface BudgetStoreOptions {
  /** Connection options of the dashboard's NATS (the pane feed's). */
  readonly connectOptions: Parameters<typeof connect>[0];
  readonly retryMs: number;
  readonly log: Logger;
  readonly counts?: BudgetStoreCounts;
}

/** What the store did, for /metrics (`budget-metrics.ts`). */
export interface BudgetStoreCounts {
  /** One hour written or purged, or a write that failed (it is retried). */
  wrote(outcome: "ok" | "failed"): void;
  /** The start's read back. */
  restored(r: RestoreResult): void;
}

export interface RestoreResult {
  readonly hours: number;
  /** Hours of another SLO definition, or outside the period: not restored. */
  readonly ignored: number;
}

export class BudgetStore {
  private nc: NatsConnection | undefined;
  private closed = false;
  private stopping = false;
  /** Subject → body to write (undefined: purge the subject). */
  private readonly pending = new Map<string, string | undefined>();
  private writing: Promise<void> | undefined;

  constructor(
    private readonly ledgers: readonly BudgetLedger[],
    private readonly opts: BudgetStoreOptions,
  ) {}

  /** The stream's message bound: every SLO's held hours, and one being replaced. */
  get maxMessages(): number {
    return this.ledgers.reduce((a, l) => a + l.maxHours + 1, 0);
  }

  /** Connects (retrying until closed), ensures the stream and reads every hour into the ledgers. */
  async restore(): Promise<RestoreResult> {
    for (;;) {
      try {
        this.nc ??= await connect({ ...this.opts.connectOptions, noAsyncTraces: true });
        const jsm = await jetstreamManager(this.nc);
        await this.ensureStream(jsm);
        const got = await this.readAll(jsm);
        this.opts.counts?.restored(got);
        this.kick();
        return got;
      } catch (err) {
        if (this.stopping) return { hours: 0, ignored: 0 };
        this.opts.log.warn(
          { err: (err as Error).message },
          "slo budget: cannot restore from TM_SLO_BUDGET yet, retrying",
        );
        await new Promise((r) => setTimeout(r, this.opts.retryMs));
      }
    }
  }

  /** Queues the hours the ledgers changed (and purges the pruned ones) since the last call. */
  flushed(): void {
    for (const ledger of this.ledgers) {
      const { changed, pruned } = ledger.take();
      for (const h of changed) this.pending.set(budgetSubject(ledger.slo.name, h.hour), encodeHour(ledger.slo, h));
      for (const hour of pruned) this.pending.set(budgetSubject(ledger.slo.name, hour), undefined);
    }
    this.kick();
  }

  /** Starts the writer when there is work and none runs. */
  private kick(): void {
    if (this.writing || !this.nc || this.closed || this.pending.size === 0) return;
    this.writing = this.write(this.nc).finally(() => {
      this.writing = undefined;
      this.kick();
    });
  }

  /** Writes what is pending (within CLOSE_WAIT_MS), then closes; a restore still retrying stops. */
  async close(): Promise<void> {
    this.stopping = true;
    await within(CLOSE_WAIT_MS, this.drained());
    this.closed = true;
    await within(
      CLOSE_WAIT_MS,
      this.writing?.catch(() => undefined),
    );
    await within(
      CLOSE_WAIT_MS,
      this.nc?.close().catch(() => undefined),
    );
  }

  /** Resolves once nothing is pending or being written. */
  private async drained(): Promise<void> {
    while (this.writing && !this.closed) await this.writing.catch(() => undefined);
  }

  private async write(nc: NatsConnection): Promise<void> {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    while (!this.closed && this.pending.size > 0) {
      const [subject, body] = this.pending.entries().next().value as [string, string | undefined];
      this.pending.delete(subject);
      try {
        if (body === undefined) await jsm.streams.purge(STREAM_SLO_BUDGET, { filter: subject });
        else await js.publish(subject, body);
        this.opts.counts?.wrote("ok");
      } catch (err) {
        this.opts.counts?.wrote("failed");
        if (!this.pending.has(subject)) this.pending.set(subject, body);
        this.opts.log.warn({ err: (err as Error).message, subject }, "slo budget: write failed, retrying");
        await new Promise((r) => setTimeout(r, this.opts.retryMs));
      }
    }
  }

  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    const longest = Math.max(...this.ledgers.map((l) => l.slo.periodMs));
    const config = {
      name: STREAM_SLO_BUDGET,
      subjects: [`${SUBJECT_SLO_BUDGET}.>`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_msgs_per_subject: 1,
      max_msgs: this.maxMessages,
      max_age: (longest + 2 * HOUR_MS) * NS_PER_MS,
    };
    const existing = await jsm.streams.info(STREAM_SLO_BUDGET).catch((err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    });
    // The dashboard owns this stream: its bounds follow the SLOs configured, its replicas TM_PANES's.
    if (existing) {
      await jsm.streams.update(STREAM_SLO_BUDGET, {
        ...existing.config,
        max_msgs: config.max_msgs,
        max_age: config.max_age,
      });
      return;
    }
    const panes = await jsm.streams.info(STREAM_PANES).catch(() => undefined);
    await jsm.streams.add({ ...config, num_replicas: panes?.config.num_replicas ?? 1 });
  }

  private async readAll(jsm: JetStreamManager): Promise<RestoreResult> {
    const info = await jsm.streams.info(STREAM_SLO_BUDGET);
    let hours = 0;
    let ignored = 0;
    if (info.state.messages === 0) return { hours, ignored };
    const bySubject = new Map(
      this.ledgers.map((l) => [`${SUBJECT_SLO_BUDGET}.${Buffer.from(l.slo.name).toString("base64url")}.`, l]),
    );
    const consumer = await jetstream(this.nc as NatsConnection).consumers.get(STREAM_SLO_BUDGET, {
      deliver_policy: DeliverPolicy.All,
    });
    // In bounded fetches: a fetch that ends empty (messages expired meanwhile) ends the read too.
    for (let more = true; more;) {
      more = false;
      for await (const m of await consumer.fetch({ max_messages: FETCH_BATCH, expires: FETCH_EXPIRES_MS })) {
        const prefix = m.subject.slice(0, m.subject.lastIndexOf(".") + 1);
        const ledger = bySubject.get(prefix);
        const h = ledger ? decodeHour(ledger.slo, m.string()) : undefined;
        if (ledger && h && ledger.restore(h)) hours++;
        else ignored++;
        more = m.info.pending > 0;
        if (!more) break;
      }
    }
    return { hours, ignored };
  }
}
