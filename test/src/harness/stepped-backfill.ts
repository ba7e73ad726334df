/**
 * A backfill the test drives, for the crash tests (docs/test-rigor-runs.md): the very messages
 * `tidemark backfill` writes for a recording (BackfillPlan: the same batches, heartbeats and
 * end-of-recording heartbeat, each partition in the plan's order; docs/operations.md, "Backfill"),
 * published one heartbeat step at a time, only when the test asks. Between two kills the test
 * feeds step by step until its victim has checkpointed and passed the kill point, and holds the rest
 * of the input until the kill is done: every kill lands mid-input, however far apart a loaded
 * machine spaces the checkpoints in wall time. While a checkpoint is due by log time but not yet
 * allowed by its wall-time spacing, the test can hold log time and nudge instead of feeding on
 * (`FeedHold`): a worker cuts a checkpoint only between two input items.
 */
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { BackfillPlan, parseEngineConfig, parseRecordingLine, type BackfillMessage } from "@tidemark/engine/runtime";
import { HEARTBEAT_HEADER, eventsSubject, type TelemetryEvent } from "@tidemark/engine/protocol";

export interface SteppedBackfillOptions {
  /** The config document the engine reads (`--config`), if any: its windows and policies fix the end heartbeat. */
  config?: unknown;
  /** Events per batch (`tidemark backfill --batch`; 500 by default). */
  batch?: number;
  /** Keeps this feed's message ids apart from other runs on the same stream. */
  runId: string;
}

/** Holds log time while `hold()`: nudges, each followed by `settle()`, instead of the next step. */
export interface FeedHold {
  hold: () => boolean | Promise<boolean>;
  /** Waits after a nudge (e.g. for the worker's next status), so nudges go at the worker's pace. */
  settle: () => Promise<unknown>;
  /** At most this many nudges per `feedUntil` (a counted bound; 600 by default). */
  maxNudges?: number;
}

export class SteppedBackfill {
  /** The log time the end-of-recording heartbeat carries. */
  readonly endOfRecordingTs: number;
  /** Messages, each step ending with one heartbeat on every partition. */
  private readonly steps: BackfillMessage[][] = [];
  private next = 0;
  /** Nudges so far (`nudge`): each gets an id of its own. */
  private nudges = 0;

  constructor(
    private readonly nc: NatsConnection,
    events: readonly TelemetryEvent[],
    opts: SteppedBackfillOptions,
  ) {
    const config = parseEngineConfig({ file: opts.config, env: process.env, flags: {} });
    const plan = new BackfillPlan({
      partitions: config.partitionCount,
      partitionBy: config.partitionBy,
      runId: opts.runId,
      batchSize: opts.batch ?? 500,
    });
    const messages = events.flatMap((e, i) => plan.push(parseRecordingLine(JSON.stringify(e), `event ${i}`)));
    messages.push(...plan.end(config.core));
    this.endOfRecordingTs = plan.endOfRecordingTs(config.core);
    let step: BackfillMessage[] = [];
    for (const [i, m] of messages.entries()) {
      step.push(m);
      const after = messages[i + 1];
      if (m.heartbeatTs !== undefined && after?.heartbeatTs !== m.heartbeatTs) {
        this.steps.push(step);
        step = [];
      }
    }
    if (step.length > 0) this.steps.push(step);
  }

  /** How many nudges were published so far. */
  get nudged(): number {
    return this.nudges;
  }

  /** True once every message, the end-of-recording heartbeat included, is published. */
  get done(): boolean {
    return this.next >= this.steps.length;
  }

  /** True while at least one step of the recording's own events is held back (the end heartbeat aside). */
  get inputLeft(): boolean {
    return this.next < this.steps.length - 1;
  }

  /** Publishes the next step in order, each message acknowledged before the next; returns its heartbeat time. */
  async step(): Promise<number> {
    const step = this.steps[this.next++];
    if (step === undefined) throw new Error("SteppedBackfill.step: the whole recording is published already");
    const js = jetstream(this.nc);
    for (const m of step) {
      const h = headers();
      if (m.heartbeatTs !== undefined) h.set(HEARTBEAT_HEADER, String(m.heartbeatTs));
      await js.publish(eventsSubject(m.partition), m.body, { msgID: m.msgId, headers: h, timeout: 5_000 });
    }
    return step.at(-1)?.heartbeatTs as number;
  }

  /**
   * Feeds step by step, after each waiting for `caughtUp(t)` (the engine has taken in the step's
   * heartbeat at log time t), until `ready()`; the rest stays held. Fails when the recording's
   * events run out first: a kill then would land after the end of the input and test nothing.
   */
  async feedUntil(
    ready: () => boolean | Promise<boolean>,
    caughtUp: (t: number) => Promise<unknown>,
    what: string,
    hold?: FeedHold,
  ) {
    let nudges = 0;
    while (!(await ready())) {
      if (hold !== undefined && (await hold.hold())) {
        if (nudges++ >= (hold.maxNudges ?? 600)) throw new Error(`${nudges - 1} nudges and still not ${what}`);
        await this.nudge();
        await hold.settle();
        continue;
      }
      if (!this.inputLeft) throw new Error(`the recording's events ran out before ${what}`);
      await caughtUp(await this.step());
    }
  }

  /**
   * The last step's heartbeats (one per partition) go again, each under an id of its own: input
   * items at a log time already reached, which change no state (a heartbeat only moves log time
   * forward; docs/semantics.md, "Watermarks"), but give every worker a point between two items to
   * cut a checkpoint that is due, or asked for, and was held back by its wall-time spacing
   * (docs/operations.md, "Checkpoints").
   */
  async nudge(): Promise<void> {
    const step = this.steps[this.next - 1] ?? [];
    const ts = step.at(-1)?.heartbeatTs;
    if (ts === undefined) throw new Error("SteppedBackfill.nudge: no heartbeat published yet");
    const js = jetstream(this.nc);
    const n = this.nudges++;
    for (const m of step.filter((x) => x.heartbeatTs === ts)) {
      const h = headers();
      h.set(HEARTBEAT_HEADER, String(ts));
      await js.publish(eventsSubject(m.partition), m.body, {
        msgID: `${m.msgId}-nudge-${n}`,
        headers: h,
        timeout: 5_000,
      });
    }
  }

  /** Publishes everything still held, the end-of-recording heartbeat last. */
  async finish(): Promise<number> {
    while (!this.done) await this.step();
    return this.endOfRecordingTs;
  }
}
