import { describe, expect, it } from "vitest";
import { Prng } from "../prng.js";
import { select } from "./watermark.js";

describe("select (percentile watermark)", () => {
  it("returns the k-th smallest value, like sorting", () => {
    const rng = new Prng(3);
    for (let n = 1; n < 60; n += 7) {
      const values = Float64Array.from({ length: n }, () => Math.floor(rng.next() * 20));
      const sorted = [...values].sort((x, y) => x - y);
      for (let k = 0; k < n; k++) expect(select(values.slice(), k)).toBe(sorted[k]);
    }
  });
});
