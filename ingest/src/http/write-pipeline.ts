/**
 * The steps every write request takes, in an order that never reads a body it will refuse:
 * auth (401, `authorize`, called first by each route) → content type (415, by the route) →
 * request id (400) → the token's rate and concurrency (429) → NATS ready (503) → declared size
 * (413) → read body within the body limit, the body-idle timeout and the in-flight budget
 * (413/408/429/400) → a key reused with another body (409, docs/security.md, "Idempotency") →
 * parse, inline or in a parse worker (a full parse queue: 503; docs/ingest.md, "Parsing off the
 * event loop") → stamp ingest_ts, apply the time rules and start every publish in one synchronous
 * step (so publish order is stamp order) → await every JetStream ack (503 on any failure). OTLP/gRPC calls take the same steps (grpc/otlp-grpc.ts):
 * their message arrives read and decompressed by grpc-js, and their deadline is checked last
 * before publishing (docs/ingest.md, "OTLP/gRPC").
 */
import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Readable } from "node:stream";
import type { IngestConfig } from "../config.js";
import { IngestError } from "../errors.js";
import type { IngestClock } from "../events/ingest-clock.js";
import type { EventPublisher } from "../nats/event-publisher.js";
import type { NatsLink } from "../nats/nats-link.js";
import type { BodyParser } from "../parse/body-parser.js";
import type { ParseJob, Parsed } from "../parse/parse-job.js";
import type { BearerAuth } from "./bearer-auth.js";
import { readBody, take, type BodyLimits } from "./body-reader.js";
import type { IngestMetrics } from "../metrics.js";
import type { IdempotencyKeys } from "./idempotency-keys.js";
import type { InFlightBudget } from "./in-flight-budget.js";
import { requestIdOf } from "./request-id.js";
import type { TokenLimits } from "./token-limits.js";

/** One write request, whatever carries it (HTTP or gRPC). */
export interface WriteRequest {
  /** Headers (or gRPC metadata) naming the request id. */
  readonly headers: Record<string, string | string[] | undefined>;
  /** The size the client declared, refused before reading when over the body limit. */
  readonly declaredBytes: number;
  /** The decoded body, read within `limits`. */
  read(limits: BodyLimits): Promise<Buffer>;
  /** Throws when the request may no longer be stored (a gRPC deadline passed): called just before publishing. */
  beforePublish?(): void;
}

/** An HTTP request as a WriteRequest: its body stream, Content-Length and Content-Encoding. */
export function httpWrite(req: FastifyRequest): WriteRequest {
  return {
    headers: req.headers,
    declaredBytes: Number(req.headers["content-length"] ?? 0),
    read: (limits) => {
      const stream = req.body as Readable | undefined;
      return stream ? readBody(stream, req.headers["content-encoding"], limits) : Promise.resolve(Buffer.alloc(0));
    },
  };
}

/** A body already read (and decompressed) by the transport, taken from the in-flight budget all the same. */
export function bufferedWrite(
  headers: WriteRequest["headers"],
  body: Buffer,
  beforePublish?: () => void,
): WriteRequest {
  return {
    headers,
    declaredBytes: body.length,
    read: (limits) => {
      take(body.length, limits);
      return Promise.resolve(body);
    },
    beforePublish,
  };
}

export interface WriteDeps {
  readonly config: IngestConfig;
  readonly auth: BearerAuth;
  readonly budget: InFlightBudget;
  readonly link: NatsLink;
  readonly publisher: EventPublisher;
  readonly clock: IngestClock;
  readonly limits: TokenLimits;
  readonly keys: IdempotencyKeys;
  readonly metrics: IngestMetrics;
  readonly parser: BodyParser;
}

/** The body's hash in a message id: 128 bits of SHA-256, base64url. */
export function bodyHash(body: Buffer): string {
  return createHash("sha256").update(body).digest("base64url").slice(0, 22);
}

export class WritePipeline {
  constructor(private readonly deps: WriteDeps) {}

  /** The identity of the request's token (`Authorization` header or metadata); throws TM_INGEST_UNAUTHORIZED unless it is a valid one. */
  authorize(authorization: string | undefined): string {
    return this.deps.auth.check(authorization);
  }

  /** Runs a request authorized as `identity`; `job` says how its body is parsed. */
  async run(req: WriteRequest, identity: string, job: ParseJob): Promise<Parsed & { requestId: string }> {
    const { id: requestId, header } = requestIdOf(req.headers);
    const release = this.deps.limits.enter(identity);
    try {
      return await this.admitted(req, identity, requestId, header, job);
    } finally {
      release();
    }
  }

  private async admitted(
    req: WriteRequest,
    identity: string,
    requestId: string,
    header: string | null,
    job: ParseJob,
  ): Promise<Parsed & { requestId: string }> {
    const { config, budget, link, publisher, clock, keys, metrics, parser } = this.deps;
    if (!link.ready)
      throw new IngestError("TM_INGEST_UNAVAILABLE", "NATS is not reachable: retry after the Retry-After delay");
    const declared = req.declaredBytes;
    if (declared > config.maxBodyBytes)
      throw new IngestError(
        "TM_INGEST_BODY_TOO_LARGE",
        `Content-Length ${declared} exceeds ${config.maxBodyBytes} bytes: split it into smaller requests`,
      );
    let held = 0;
    try {
      const body = await req.read({
        maxBodyBytes: config.maxBodyBytes,
        bodyIdleMs: config.bodyIdleTimeoutMs,
        budget,
        onTake: (n) => (held += n),
      });
      const hash = bodyHash(body);
      if (header !== null && !keys.claim(identity, requestId, hash, Date.now())) {
        metrics.idempotencyConflicts.inc();
        throw new IngestError(
          "TM_INGEST_IDEMPOTENCY_CONFLICT",
          `${header} "${requestId}" was used for a different body within the deduplication window: nothing was stored; send new events with a new key`,
        );
      }
      const parsed = await parser.parse(job, body);
      // One synchronous step from here to the publishes: stamp order is publish order.
      parsed.batch.stamp(clock.now(), config);
      req.beforePublish?.();
      if (parsed.batch.events.length > 0)
        await publisher.publish(`${requestId}:${identity}:${hash}`, parsed.batch.events);
      return { ...parsed, requestId };
    } catch (err) {
      if (err instanceof IngestError && err.code === "TM_INGEST_BODY_TIMEOUT")
        metrics.limited.inc({ limit: "body_idle" });
      if (err instanceof IngestError && err.code === "TM_INGEST_PARSE_BUSY")
        metrics.limited.inc({ limit: "parse_queue" });
      throw err;
    } finally {
      budget.release(held);
    }
  }
}
