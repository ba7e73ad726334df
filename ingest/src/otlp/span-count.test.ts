import { describe, expect, it } from "vitest";
import { ExportTraceServiceRequest } from "./otlp-schema.js";
import { countSpans } from "./span-count.js";

/** An encoded request of `layout[r][s]` spans in scope s of resource r, with attributes around them. */
function encoded(layout: number[][]): Uint8Array {
  const span = (i: number) => ({
    traceId: new Uint8Array(16).fill(1),
    spanId: new Uint8Array(8).fill(i % 250),
    parentSpanId: new Uint8Array(8).fill(2),
    name: `span-${i}`,
    kind: 3,
    startTimeUnixNano: 1_700_000_000_000_000_000,
    endTimeUnixNano: 1_700_000_000_100_000_000,
    attributes: [{ key: "http.route", value: { stringValue: "/x" } }],
  });
  let i = 0;
  return ExportTraceServiceRequest.encode(
    ExportTraceServiceRequest.fromObject({
      resourceSpans: layout.map((scopes) => ({
        resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] },
        scopeSpans: scopes.map((n) => ({ spans: Array.from({ length: n }, () => span(i++)) })),
      })),
    }),
  ).finish();
}

describe("counting OTLP spans on the wire", () => {
  it("counts every span of every scope of every resource, as encoded", () => {
    for (const layout of [
      [],
      [[0]],
      [[3]],
      [
        [2, 5],
        [0, 1, 7],
      ],
      [[100]],
    ]) {
      const total = layout.flat().reduce((a, b) => a + b, 0);
      expect(countSpans(encoded(layout), 1_000_000)).toBe(total);
    }
  });

  it("stops one past the limit, and returns what it counted on a malformed body", () => {
    expect(countSpans(encoded([[50, 50], [50]]), 120)).toBe(121);
    expect(countSpans(encoded([[120]]), 120)).toBe(120);
    const cut = encoded([[10]]);
    expect(countSpans(cut.subarray(0, cut.length - 3), 100)).toBeLessThanOrEqual(10);
    expect(countSpans(Uint8Array.from([0xff, 0xff, 0xff]), 100)).toBe(0);
  });
});
