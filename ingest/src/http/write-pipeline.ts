/**
 * The steps every write request takes, in an order that never reads a body it will refuse:
 * auth (401, `authorize`, called first by each route) → content type (415, by the route) →
 * request id (400) → NATS ready (503) → declared size (413) → read body within the
 * body limit and the in-flight budget (413/429/400) → stamp ingest_ts, parse, and start every
 * publish in one synchronous step → await every JetStream ack (503 on any failure).
 */
import type { FastifyRequest } from "fastify";
import type { Readable } from "node:stream";
import type { IngestConfig } from "../config.js";
import { IngestError } from "../errors.js";
import type { IngestClock } from "../events/ingest-clock.js";
import type { RecordBatch } from "../events/record-batch.js";
import type { EventPublisher } from "../nats/event-publisher.js";
import type { NatsLink } from "../nats/nats-link.js";
import type { BearerAuth } from "./bearer-auth.js";
import { readBody } from "./body-reader.js";
import type { InFlightBudget } from "./in-flight-budget.js";
import { requestIdOf } from "./request-id.js";

export interface WriteDeps {
  readonly config: IngestConfig;
  readonly auth: BearerAuth;
  readonly budget: InFlightBudget;
  readonly link: NatsLink;
  readonly publisher: EventPublisher;
  readonly clock: IngestClock;
}

export class WritePipeline {
  constructor(private readonly deps: WriteDeps) {}

  /** Throws TM_INGEST_UNAUTHORIZED unless the request carries a valid bearer token. */
  authorize(req: FastifyRequest): void {
    this.deps.auth.check(req.headers.authorization);
  }

  /** Runs an authorized request through; `parse` turns the body into a batch at ingest time `ingestTs`. */
  async run<T extends { batch: RecordBatch }>(
    req: FastifyRequest,
    parse: (body: Buffer, ingestTs: number) => T,
  ): Promise<T & { requestId: string }> {
    const { config, budget, link, publisher, clock } = this.deps;
    const requestId = requestIdOf(req.headers);
    if (!link.ready)
      throw new IngestError("TM_INGEST_UNAVAILABLE", "NATS is not reachable: retry after the Retry-After delay");
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > config.maxBodyBytes)
      throw new IngestError(
        "TM_INGEST_BODY_TOO_LARGE",
        `Content-Length ${declared} exceeds ${config.maxBodyBytes} bytes: split it into smaller requests`,
      );
    let held = 0;
    try {
      const stream = req.body as Readable | undefined;
      const body = stream
        ? await readBody(stream, req.headers["content-encoding"], {
            maxBodyBytes: config.maxBodyBytes,
            budget,
            onTake: (n) => (held += n),
          })
        : Buffer.alloc(0);
      const ingestTs = clock.now();
      const result = parse(body, ingestTs);
      if (result.batch.events.length > 0) await publisher.publish(requestId, result.batch.events);
      return { ...result, requestId };
    } finally {
      budget.release(held);
    }
  }
}
