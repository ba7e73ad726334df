/**
 * Parsing with the time deferred, then stamping (what the write pipeline does, inline or in a
 * parse worker), gives exactly what parsing at that ingest time gives: the same events, the same
 * per-record errors in record order (the first 100), the same counts. And a batch packed for the
 * trip back from a worker unpacks to the same batch.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEventBody, type EventBodyOptions } from "../events/event-body.js";
import { DEFERRED } from "../events/normalize-event.js";
import { packBatch, unpackBatch } from "./batch-transfer.js";

const OPTS: EventBodyOptions = {
  maxEventsPerRequest: 10_000,
  maxStringLength: 32,
  maxFutureSkewMs: 300_000,
  maxAgeMs: 86_400_000,
};
const T = 1_765_000_000_000;

/** Records around every time rule: too old, at the edges, future past the skew, no ts, bad ts, bad fields. */
const record = fc.record(
  {
    service: fc.oneof(fc.constantFrom("api", "web", "*", ""), fc.string({ maxLength: 40 })),
    route: fc.constantFrom("/a", "/b?x=1", undefined),
    status: fc.oneof(fc.constantFrom(200, 404, 503), fc.integer({ min: 0, max: 700 })),
    ts: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(
        T,
        T - OPTS.maxAgeMs,
        T - OPTS.maxAgeMs - 1,
        T + OPTS.maxFutureSkewMs,
        T + OPTS.maxFutureSkewMs + 1,
        1_700_000_000,
        "2025-12-06T05:46:40Z",
        "yesterday",
      ),
      fc.integer({ min: T - 2 * OPTS.maxAgeMs, max: T + 2 * OPTS.maxFutureSkewMs }),
    ),
    user: fc.constantFrom("u1", "u2", ""),
  },
  { requiredKeys: [] },
);

function body(records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

function outcome(b: ReturnType<typeof parseEventBody>) {
  return { events: b.events, errors: b.errors, rejected: b.rejected, clamped: b.clamped, by: b.rejectedBy };
}

describe("deferred time", () => {
  it("parse deferred + stamp equals parse at the ingest time, errors merged in record order", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 300 }), fc.integer({ min: 0, max: 1000 }), (records, dt) => {
        const text = body(records);
        const direct = parseEventBody(text, "ndjson", T + dt, OPTS);
        const deferred = parseEventBody(text, "ndjson", DEFERRED, OPTS);
        deferred.stamp(T + dt, OPTS);
        expect(outcome(deferred)).toEqual(outcome(direct));
      }),
      { numRuns: 200 },
    );
  });

  it("a packed batch unpacks to the same batch, and stamps the same", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 300 }), (records) => {
        const text = body(records);
        const deferred = parseEventBody(text, "ndjson", DEFERRED, OPTS);
        const { packed } = packBatch({ batch: deferred, skipped: 3 });
        const { batch, skipped } = unpackBatch(structuredClone(packed), OPTS.maxEventsPerRequest);
        expect(skipped).toBe(3);
        expect(batch.recordCount).toBe(deferred.recordCount);
        expect(batch.eventIndex).toEqual(deferred.eventIndex);
        batch.stamp(T, OPTS);
        deferred.stamp(T, OPTS);
        expect(outcome(batch)).toEqual(outcome(deferred));
      }),
      { numRuns: 100 },
    );
  });
});
