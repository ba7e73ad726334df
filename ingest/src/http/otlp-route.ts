/**
 * `POST /v1/traces` and `POST /v1/logs`: OTLP/HTTP, protobuf or JSON. Replies in the request's
 * content type: the signal's Export*ServiceResponse (partialSuccess when records were refused)
 * or, on failure, google.rpc.Status; 400/401/413/415 are not retryable, 429/503 carry Retry-After.
 */
import type { FastifyInstance } from "fastify";
import { IngestError } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { countOtlp, type IngestMetrics } from "../metrics.js";
import { otlpFailure, otlpSuccess } from "../otlp/otlp-response.js";
import { rejectionMessage, type OtlpSignal } from "../otlp/otlp-signal.js";
import { failureOf } from "./events-route.js";
import { traceFormatOf } from "./media-type.js";
import { httpWrite, type WritePipeline } from "./write-pipeline.js";

export function registerOtlpRoute(
  app: FastifyInstance,
  signal: OtlpSignal,
  pipeline: WritePipeline,
  opts: EventBodyOptions & { retryAfterS: number },
  metrics: IngestMetrics,
): void {
  app.post(signal.httpPath, async (req, reply) => {
    const format = traceFormatOf(req.headers["content-type"]);
    try {
      const identity = pipeline.authorize(req.headers.authorization);
      if (!format)
        throw new IngestError(
          "TM_INGEST_UNSUPPORTED_MEDIA_TYPE",
          `Content-Type "${req.headers["content-type"] ?? ""}" is not accepted on ${signal.httpPath}: send application/x-protobuf or application/json`,
        );
      const { batch, skipped, requestId } = await pipeline.run(httpWrite(req), identity, {
        kind: signal.name,
        format,
      });
      countOtlp(metrics, signal.name, batch, skipped);
      const out = otlpSuccess(signal, format, batch.rejected, rejectionMessage(signal, { batch, skipped }));
      return reply.code(200).header("x-request-id", requestId).type(out.contentType).send(out.body);
    } catch (err) {
      const e = failureOf(err, opts.retryAfterS, reply);
      const out = otlpFailure(format ?? "json", e.status, `${e.code}: ${e.message}`);
      return reply.code(e.status).type(out.contentType).send(out.body);
    }
  });
}
