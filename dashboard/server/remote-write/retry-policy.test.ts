import protobuf from "protobufjs";
import snappy from "snappyjs";
import { describe, expect, it } from "vitest";
import { outcomeOf, parseRetryAfter, retryDelayMs } from "./retry-policy.js";
import { writeRequestBody } from "./write-request.js";

describe("retry policy", () => {
  it("retries 5xx, 429 and no answer; refuses other 4xx; accepts 2xx", () => {
    expect([200, 204, 400, 401, 404, 413, 429, 500, 503, undefined].map((c) => outcomeOf(c).kind)).toEqual([
      "accepted",
      "accepted",
      "refused",
      "refused",
      "refused",
      "refused",
      "retry",
      "retry",
      "retry",
      "retry",
    ]);
  });

  it("backs off exponentially with full jitter under the cap, and honours Retry-After", () => {
    const b = { minMs: 30, maxMs: 5000 };
    expect(retryDelayMs(1, b, 0.999)).toBe(29);
    expect(retryDelayMs(4, b, 0.999)).toBe(Math.floor(240 * 0.999));
    expect(retryDelayMs(20, b, 0.5)).toBe(2500);
    expect(retryDelayMs(3, b, 0)).toBe(15);
    expect(retryDelayMs(1, b, 0.5, 2000)).toBe(2000);
    expect(retryDelayMs(1, b, 0.5, 60_000)).toBe(5000);
    expect(parseRetryAfter("3", 0)).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
  });
});

describe("write request", () => {
  it("is a snappy-compressed prometheus.WriteRequest (decoded with a schema of its own)", () => {
    const root = protobuf.Root.fromJSON({
      nested: {
        WriteRequest: { fields: { timeseries: { rule: "repeated", type: "TimeSeries", id: 1 } } },
        TimeSeries: {
          fields: {
            labels: { rule: "repeated", type: "Label", id: 1 },
            samples: { rule: "repeated", type: "Sample", id: 2 },
          },
        },
        Label: { fields: { name: { type: "string", id: 1 }, value: { type: "string", id: 2 } } },
        Sample: { fields: { value: { type: "double", id: 1 }, timestamp: { type: "int64", id: 2 } } },
      },
    });
    const body = writeRequestBody([
      {
        series: "x",
        labels: [
          ["__name__", "tidemark_requests"],
          ["service", "api"],
        ],
        ts: 1_700_000_010_000,
        value: 42.5,
      },
    ]);
    const decoded = root
      .lookupType("WriteRequest")
      .toObject(root.lookupType("WriteRequest").decode(snappy.uncompress(body)), { longs: Number });
    expect(decoded).toEqual({
      timeseries: [
        {
          labels: [
            { name: "__name__", value: "tidemark_requests" },
            { name: "service", value: "api" },
          ],
          samples: [{ value: 42.5, timestamp: 1_700_000_010_000 }],
        },
      ],
    });
  });
});
