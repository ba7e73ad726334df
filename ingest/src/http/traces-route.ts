/**
 * `POST /v1/traces`: OTLP/HTTP traces, protobuf or JSON. Replies in the request's content type:
 * ExportTraceServiceResponse (partialSuccess.rejectedSpans when spans were refused) or, on
 * failure, google.rpc.Status; 400/401/413/415 are not retryable, 429/503 carry Retry-After.
 */
import type { FastifyInstance } from "fastify";
import { IngestError } from "../errors.js";
import type { EventBodyOptions } from "../events/event-body.js";
import { countBatch, type IngestMetrics } from "../metrics.js";
import { otlpFailure, otlpSuccess } from "../otlp/otlp-response.js";
import { parseTraceBody } from "../otlp/trace-body.js";
import { failureOf } from "./events-route.js";
import { traceFormatOf } from "./media-type.js";
import type { WritePipeline } from "./write-pipeline.js";

export const TRACES_PATH = "/v1/traces";

export function registerTracesRoute(
  app: FastifyInstance,
  pipeline: WritePipeline,
  opts: EventBodyOptions & { retryAfterS: number },
  metrics: IngestMetrics,
): void {
  app.post(TRACES_PATH, async (req, reply) => {
    const format = traceFormatOf(req.headers["content-type"]);
    try {
      const identity = pipeline.authorize(req);
      if (!format)
        throw new IngestError(
          "TM_INGEST_UNSUPPORTED_MEDIA_TYPE",
          `Content-Type "${req.headers["content-type"] ?? ""}" is not accepted on /v1/traces: send application/x-protobuf or application/json`,
        );
      const { batch, skipped, requestId } = await pipeline.run(req, identity, (body, ingestTs) =>
        parseTraceBody(body, format, ingestTs, opts),
      );
      countBatch(metrics, "traces", batch);
      metrics.skippedSpans.inc(skipped);
      const first = batch.errors[0];
      const message = first
        ? `${batch.rejected} span(s) rejected; first: span ${first.index} ${first.field} ${first.message}`
        : "";
      const out = otlpSuccess(format, batch.rejected, message);
      return reply.code(200).header("x-request-id", requestId).type(out.contentType).send(out.body);
    } catch (err) {
      const e = failureOf(err, opts.retryAfterS, reply);
      const out = otlpFailure(format ?? "json", e.status, `${e.code}: ${e.message}`);
      return reply.code(e.status).type(out.contentType).send(out.body);
    }
  });
}
