/**
 * A bounded pool of parse workers (docs/ingest.md, "Parsing off the event loop"): `size` worker
 * threads, one body each at a time, and at most `maxQueued` bodies waiting for one; past that a
 * body is refused at once (503 TM_INGEST_PARSE_BUSY, with Retry-After) rather than held. A body
 * is moved to its worker, not copied, when it owns its memory. A worker that dies fails its body
 * (500, nothing stored) and is replaced; one that dies before it ever came online is not (a
 * broken install would respawn for ever): with no worker left, `live` is 0 and bodies are parsed
 * inline (body-parser.ts).
 */
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { IngestError, type IngestErrorCode } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { unpackBatch, type PackedBatch } from "./batch-transfer.js";
import type { ParseJob, Parsed } from "./parse-job.js";
import type { ParseRequest } from "./parse-worker.js";

interface Task {
  readonly job: ParseJob;
  readonly body: Buffer;
  resolve(p: Parsed): void;
  reject(e: unknown): void;
}

type Result =
  | { id: number; packed: PackedBatch }
  | { id: number; refused: { code: IngestErrorCode; message: string } }
  | { id: number; failed: string };
type Reply = { ready: true } | Result;

interface Slot {
  worker: Worker;
  task?: Task;
  /** The worker's module loaded (it said so): from then on a death is replaced. */
  online: boolean;
}

export class ParsePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    readonly size: number,
    readonly maxQueued: number,
    private readonly opts: EventBodyOptions,
    private readonly log: Logger,
    /** The worker's module (parse-worker.js beside this file). */
    private readonly workerUrl: URL = new URL("./parse-worker.js", import.meta.url),
  ) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  /** Bodies waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Workers running (or starting). */
  get live(): number {
    return this.slots.length;
  }

  /** Workers parsing a body now. */
  get busy(): number {
    return this.slots.filter((s) => s.task).length;
  }

  /** Parses `body` in a worker; throws TM_INGEST_PARSE_BUSY when every worker is busy and the queue is full. */
  parse(job: ParseJob, body: Buffer): Promise<Parsed> {
    const free = this.slots.find((s) => !s.task);
    if (!free && this.queue.length >= this.maxQueued)
      throw new IngestError(
        "TM_INGEST_PARSE_BUSY",
        `${this.size} parse workers are busy and ${this.queue.length} bodies wait for one (maxQueuedParses): nothing was stored; retry after the Retry-After delay`,
      );
    return new Promise<Parsed>((resolve, reject) => {
      const task: Task = { job, body, resolve, reject };
      if (free) this.start(free, task);
      else this.queue.push(task);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const gone = new IngestError("TM_INGEST_UNAVAILABLE", "ingest is shutting down: nothing was stored; send it again");
    for (const t of this.queue.splice(0)) t.reject(gone);
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const worker = new Worker(this.workerUrl, { workerData: this.opts });
    const slot: Slot = { worker, online: false };
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) slot.online = true;
      else this.finish(slot, reply);
    });
    worker.on("error", (err) => this.fail(slot, err));
    worker.on("exit", (code) => this.fail(slot, new Error(`parse worker exited with code ${code}`)));
    worker.unref();
    return slot;
  }

  private start(slot: Slot, task: Task): void {
    slot.task = task;
    const { body } = task;
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    const bytes = owned ? new Uint8Array(body.buffer) : new Uint8Array(body);
    const req: ParseRequest = { id: this.nextId++, job: task.job, body: bytes };
    slot.worker.postMessage(req, [bytes.buffer as ArrayBuffer]);
  }

  private finish(slot: Slot, reply: Result): void {
    const task = slot.task;
    slot.task = undefined;
    this.next(slot);
    if (!task) return;
    if ("packed" in reply) task.resolve(unpackBatch(reply.packed, this.opts.maxEventsPerRequest));
    else if ("refused" in reply) task.reject(new IngestError(reply.refused.code, reply.refused.message));
    else task.reject(this.internal(reply.failed));
  }

  /** A worker died: its body fails, and a new worker takes its place. */
  private fail(slot: Slot, err: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0 || this.closed) return;
    slot.task?.reject(this.internal(err.stack ?? err.message));
    slot.task = undefined;
    void slot.worker.terminate();
    if (!slot.online) {
      this.log.error({ err }, "a parse worker failed to start: not replaced; bodies are parsed inline without workers");
      this.slots.splice(i, 1);
      const other = this.slots.find((s) => !s.task);
      if (other) this.next(other);
      else if (this.slots.length === 0) for (const t of this.queue.splice(0)) t.reject(this.internal(err.message));
      return;
    }
    const fresh = this.spawn();
    this.slots[i] = fresh;
    this.next(fresh);
  }

  private next(slot: Slot): void {
    const task = this.queue.shift();
    if (task) this.start(slot, task);
  }

  private internal(detail: string): IngestError {
    this.log.error({ detail }, "parse worker failed");
    return new IngestError("TM_INGEST_INTERNAL", "internal error: the ingest log has the details");
  }
}
