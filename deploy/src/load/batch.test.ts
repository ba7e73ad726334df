import { describe, expect, it } from "vitest";
import { batchBody, cut, makeBatch, recordLines } from "./batch.js";

const event = (i: number) => ({
  ts: 1_800_000_000_000 + i,
  service: "checkout",
  route: "POST /api/v1/checkout",
  status: i === 1 ? 503 : 200,
  latency_ms: 12.5 + i,
  user: `user-${i}`,
});

describe("batch", () => {
  const b = makeBatch(
    "load-1-2-3",
    [0, 1, 2].map((i) => ({ event: event(i), late: i === 2 })),
  );

  it("posts one event per line in the recording format's field order", () => {
    expect(b.late).toBe(1);
    expect(batchBody(b)).toBe(
      [0, 1, 2]
        .map(
          (i) =>
            `{"ts":${1_800_000_000_000 + i},"service":"checkout","route":"POST /api/v1/checkout",` +
            `"status":${i === 1 ? 503 : 200},"latency_ms":${12.5 + i},"user":"user-${i}"}\n`,
        )
        .join(""),
    );
  });

  it("records the accepted events only, each with sent_at", () => {
    const lines = recordLines(b, new Set([1]), 1_800_000_000_500)
      .trimEnd()
      .split("\n");
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { ...event(0), sent_at: 1_800_000_000_500 },
      { ...event(2), sent_at: 1_800_000_000_500 },
    ]);
    expect(recordLines(b, new Set([0, 1, 2]), 0)).toBe("");
  });

  it("cuts a list into runs of at most the batch size", () => {
    expect(cut([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(cut([], 2)).toEqual([]);
  });
});
