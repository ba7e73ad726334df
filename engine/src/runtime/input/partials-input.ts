/**
 * PartialsInput: a merge operator's input (docs/decisions/0029-two-stage-dataflow.md, "Runtime") as
 * an InputSource of the OperatorHost (host/input-source.ts): its merge partition's subject of
 * TM_PARTIALS read in stream order from the checkpointed sequence (OrderedReader), asked for when it
 * starts (after the host restored the operator). A batch is one message; the reader takes the next
 * only once the host has pulled and handled it, so at most one message waits here (the host pulls none while a cut's state is captured or an output is
 * saturated: the reader is held meanwhile, docs/decisions/0035-backpressure.md).
 */
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { OrderedReader } from "./ordered-reader.js";

export class PartialsInput {
  private reader: OrderedReader | null = null;
  private ready: () => void = () => undefined;
  private next: JsMsg | null = null;
  /** The reader waits on this until the message it handed on is handled. */
  private taken: { promise: Promise<void>; resolve: () => void } | null = null;
  private closing = false;

  constructor(
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly subject: string,
    /** Sequence of the last message already accounted for when the input starts (0: read from the beginning). */
    private readonly fromSeq: () => number,
    private readonly problem: (what: string, err: unknown) => void,
  ) {}

  start(ready: () => void): void {
    this.ready = ready;
    const { js, stream, subject } = this;
    this.reader = new OrderedReader(js, stream, subject, `${stream} ${subject}`, this.fromSeq(), {
      message: (m) => {
        this.next = m;
        this.ready();
      },
      backpressure: () => this.wait(),
      problem: this.problem,
    });
    this.reader.start();
  }

  pull(): JsMsg | null {
    const m = this.next;
    this.next = null;
    return m;
  }

  /** The message handed on was handled: the reader reads on. */
  release(): void {
    if (this.next !== null || this.taken === null) return;
    const { resolve } = this.taken;
    this.taken = null;
    resolve();
  }

  restart(): void {
    this.reader?.restart();
  }

  async stop(): Promise<void> {
    this.closing = true;
    this.taken?.resolve();
    this.taken = null;
    await this.reader?.stop();
  }

  private wait(): Promise<void> | undefined {
    if (this.closing || this.next === null) return undefined;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.taken = { promise, resolve };
    return promise;
  }
}
