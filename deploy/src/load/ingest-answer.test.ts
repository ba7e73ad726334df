import { describe, expect, it } from "vitest";
import { readAcceptedAnswer } from "./ingest-answer.js";

describe("readAcceptedAnswer", () => {
  it("names the rejected records by index; exact when every rejection is named and nothing clamped", () => {
    const body = JSON.stringify({
      accepted: 3,
      rejected: 2,
      clamped: 0,
      errors: [
        { index: 1, field: "service", message: "is required: a non-empty string" },
        { index: 4, field: "ts", message: "too old" },
      ],
    });
    const a = readAcceptedAnswer(body, 5);
    expect([...a.rejectedIndices]).toEqual([1, 4]);
    expect(a).toMatchObject({ rejected: 2, clamped: 0, exact: true, firstError: "is required: a non-empty string" });
    expect(readAcceptedAnswer('{"accepted":5,"rejected":0,"clamped":0,"errors":[]}', 5).exact).toBe(true);
  });

  it("is not exact when ingest rejected more than it named (over 100), clamped a ts, or answered something else", () => {
    const many = { accepted: 0, rejected: 150, clamped: 0, errors: [{ index: 0, field: "ts", message: "x" }] };
    expect(readAcceptedAnswer(JSON.stringify({ ...many, accepted: 50 }), 200).exact).toBe(false);
    expect(readAcceptedAnswer('{"accepted":5,"rejected":0,"clamped":1,"errors":[]}', 5).exact).toBe(false);
    expect(readAcceptedAnswer("ok", 5)).toMatchObject({ exact: false, rejected: 0 });
    expect(readAcceptedAnswer("null", 5)).toMatchObject({ exact: false, rejected: 0 });
    expect(readAcceptedAnswer('{"accepted":4,"rejected":0,"clamped":0,"errors":[]}', 5).exact).toBe(false);
  });

  it("ignores indices outside the batch", () => {
    const a = readAcceptedAnswer('{"accepted":2,"rejected":1,"clamped":0,"errors":[{"index":7}]}', 3);
    expect(a.rejectedIndices.size).toBe(0);
    expect(a.exact).toBe(false);
  });
});
