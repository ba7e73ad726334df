/**
 * Where a write body is parsed (docs/ingest.md, "Parsing off the event loop"): a body of at least
 * `offloadBytes` goes to the parse pool when there is one; a smaller body is parsed inline, where
 * it holds the event loop for less than the hand-off to a worker and back would cost it.
 */
import type { EventBodyOptions } from "../events/event-body.js";
import type { ParsePool } from "./parse-pool.js";
import { parseDeferred, type ParseJob, type Parsed } from "./parse-job.js";

export class BodyParser {
  constructor(
    private readonly opts: EventBodyOptions,
    private readonly offloadBytes: number,
    private readonly pool: ParsePool | null,
    /** Called for each body handed to the pool. */
    private readonly offloaded: () => void = () => undefined,
  ) {}

  parse(job: ParseJob, body: Buffer): Parsed | Promise<Parsed> {
    if (!this.pool || this.pool.live === 0 || body.length < this.offloadBytes)
      return parseDeferred(job, body, this.opts);
    const parsed = this.pool.parse(job, body);
    this.offloaded();
    return parsed;
  }
}
