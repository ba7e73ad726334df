/**
 * The order of the write pipeline for a message its transport already read (OTLP/gRPC): the
 * in-flight budget is taken and released, and `beforePublish` (the call's deadline) is checked
 * after parsing and before anything is published, so an expired call stores nothing.
 * End to end with real NATS: test/src/otlp/grpc-refusals.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import { defineIngestConfig } from "../config.js";
import { IngestError } from "../errors.js";
import { IngestClock } from "../events/ingest-clock.js";
import { RecordBatch } from "../events/record-batch.js";
import { createIngestMetrics } from "../metrics.js";
import type { EventPublisher } from "../nats/event-publisher.js";
import type { NatsLink } from "../nats/nats-link.js";
import { BearerAuth } from "./bearer-auth.js";
import { IdempotencyKeys } from "./idempotency-keys.js";
import { InFlightBudget } from "./in-flight-budget.js";
import type { BodyParser } from "../parse/body-parser.js";
import type { ParseJob, Parsed } from "../parse/parse-job.js";
import { TokenLimits } from "./token-limits.js";
import { WritePipeline, bufferedWrite } from "./write-pipeline.js";

const JOB: ParseJob = { kind: "events", format: "ndjson" };

function pipeline(
  published: TelemetryEvent[][],
  budget: InFlightBudget,
  parse: () => Parsed = oneEvent,
): WritePipeline {
  return new WritePipeline({
    config: defineIngestConfig({ port: 0 }),
    auth: new BearerAuth([]),
    budget,
    link: { ready: true } as NatsLink,
    publisher: {
      publish: async (_id: string, events: TelemetryEvent[]) => void published.push(events),
    } as never as EventPublisher,
    clock: new IngestClock(),
    limits: new TokenLimits(0, 0, () => undefined),
    keys: new IdempotencyKeys(120_000, 10),
    metrics: createIngestMetrics(() => 0),
    parser: { parse } as never as BodyParser,
  });
}

// As parsed, before the stamp: no ts given (NaN), ingest_ts not known yet.
const event: TelemetryEvent = {
  ts: NaN,
  ingest_ts: NaN,
  service: "s",
  route: "/",
  status: 200,
  latency_ms: 1,
  user: "",
};

function oneEvent(): Parsed {
  const batch = new RecordBatch(10);
  batch.add({ ok: true, event: { ...event }, clamped: false }, 0);
  return { batch, skipped: 0 };
}

describe("write pipeline with a buffered message", () => {
  it("publishes after beforePublish passes, holding the body in the budget meanwhile", async () => {
    const published: TelemetryEvent[][] = [];
    const budget = new InFlightBudget(1024);
    let heldWhileParsing = -1;
    const before = Date.now();
    await pipeline(published, budget, () => {
      heldWhileParsing = budget.bytes;
      return oneEvent();
    }).run(bufferedWrite({}, Buffer.alloc(100)), "open", JOB);
    expect(heldWhileParsing).toBe(100);
    expect(budget.bytes).toBe(0);
    expect(published).toHaveLength(1);
    // Stamped after parsing: ingest_ts now, and ts (none given) the same.
    const stored = published[0]?.[0] as TelemetryEvent;
    expect(stored.ingest_ts).toBeGreaterThanOrEqual(before);
    expect(stored.ts).toBe(stored.ingest_ts);
  });

  it("stores nothing when beforePublish throws (an expired deadline), and releases the budget", async () => {
    const published: TelemetryEvent[][] = [];
    const budget = new InFlightBudget(1024);
    const expired = (): void => {
      throw new IngestError("TM_INGEST_DEADLINE_EXCEEDED", "deadline passed");
    };
    const run = pipeline(published, budget).run(bufferedWrite({}, Buffer.alloc(100), expired), "open", JOB);
    await expect(run).rejects.toMatchObject({ code: "TM_INGEST_DEADLINE_EXCEEDED" });
    expect(published).toHaveLength(0);
    expect(budget.bytes).toBe(0);
  });

  it("refuses a message over the in-flight budget with 429 before parsing it", async () => {
    let parsed = false;
    const run = pipeline([], new InFlightBudget(50), () => {
      parsed = true;
      return oneEvent();
    }).run(bufferedWrite({}, Buffer.alloc(100)), "open", JOB);
    await expect(run).rejects.toMatchObject({ code: "TM_INGEST_OVERLOADED" });
    expect(parsed).toBe(false);
  });
});
