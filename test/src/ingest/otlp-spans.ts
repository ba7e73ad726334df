/** Finished server spans made by the real OpenTelemetry JS SDK, for encoding with its own serializers. */
import { SpanKind } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";

/** One server span "GET /x" per start time (ms), each lasting 5 ms, from a resource named `service`. */
export async function serverSpans(service: string, startMs: readonly number[]): Promise<ReadableSpan[]> {
  const mem = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new SimpleSpanProcessor(mem)],
  });
  for (const t of startMs)
    provider
      .getTracer("ingest-test")
      .startSpan("GET /x", { kind: SpanKind.SERVER, startTime: t })
      .end(t + 5);
  await provider.forceFlush();
  return mem.getFinishedSpans();
}
