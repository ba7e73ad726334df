/**
 * `POST /v1/events`: NDJSON or JSON events. 200 `{accepted, rejected, clamped, errors}` when at
 * least one event is stored; 400 with the same shape when none is; 4xx/5xx `{error: {code,
 * message}}` for whole-request failures (429/503 with Retry-After).
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { IngestError } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { countBatch, type IngestMetrics } from "../metrics.js";
import { WWW_AUTHENTICATE } from "./bearer-auth.js";
import { eventFormatOf } from "./media-type.js";
import { httpWrite, type WritePipeline } from "./write-pipeline.js";

export const EVENTS_PATH = "/v1/events";

/** Headers and body for a whole-request failure; rethrows what is not an IngestError. */
export function failureOf(err: unknown, retryAfterS: number, reply: FastifyReply): IngestError {
  if (!(err instanceof IngestError)) throw err;
  if (err.retryable) reply.header("retry-after", String(retryAfterS));
  if (err.status === 401) reply.header("www-authenticate", WWW_AUTHENTICATE);
  // The rest of a stalled body is not read: the connection ends with the answer.
  if (err.status === 408) reply.header("connection", "close");
  return err;
}

export function registerEventsRoute(
  app: FastifyInstance,
  pipeline: WritePipeline,
  opts: EventBodyOptions & { retryAfterS: number },
  metrics: IngestMetrics,
): void {
  app.post(EVENTS_PATH, async (req, reply) => {
    try {
      const identity = pipeline.authorize(req.headers.authorization);
      const format = eventFormatOf(req.headers["content-type"]);
      const { batch, requestId } = await pipeline.run(httpWrite(req), identity, { kind: "events", format });
      countBatch(metrics, "events", batch);
      reply.header("x-request-id", requestId);
      const summary = {
        accepted: batch.events.length,
        rejected: batch.rejected,
        clamped: batch.clamped,
        errors: batch.errors,
      };
      if (batch.events.length > 0) return reply.code(200).send(summary);
      const message =
        batch.rejected > 0 ? "no event in the request is valid: see errors" : "the request holds no events";
      return reply.code(400).send({ ...summary, error: { code: "TM_INGEST_NO_VALID_EVENTS", message } });
    } catch (err) {
      const e = failureOf(err, opts.retryAfterS, reply);
      return reply.code(e.status).send({ error: { code: e.code, message: e.message } });
    }
  });
}
