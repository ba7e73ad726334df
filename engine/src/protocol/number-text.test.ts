import { describe, expect, it } from "vitest";
import { Prng } from "../core/prng.js";
import { numberText } from "./number-text.js";

describe("numberText", () => {
  it("is String(v) for every number, seen before or not, whatever shares its slot", () => {
    const rnd = new Prng(21);
    const pool: number[] = [
      1_767_225_600_000,
      -24_990,
      0.1,
      1 / 3,
      2 ** 53 + 2,
      1e21,
      1e-7,
      5e-324,
      -1.7976931348623157e308,
    ];
    for (let i = 0; i < 20_000; i++) {
      const pick = rnd.next();
      const v =
        pick < 0.3
          ? (pool[Math.floor(rnd.next() * pool.length)] as number)
          : pick < 0.6
            ? (rnd.next() - 0.5) * 10 ** Math.floor(rnd.next() * 40 - 20)
            : pick < 0.8
              ? Math.floor(rnd.next() * 2 ** 52) * (rnd.next() < 0.5 ? -1 : 1)
              : Math.floor(rnd.next() * 1000) / 1000;
      if (pool.length < 5000) pool.push(v);
      expect(numberText(v)).toBe(String(v));
    }
  });

  it("tells apart values that differ in the last bit", () => {
    const a = 0.1;
    const b = 0.1 + Number.EPSILON / 8;
    expect(a).not.toBe(b);
    for (let i = 0; i < 3; i++) {
      expect(numberText(a)).toBe(String(a));
      expect(numberText(b)).toBe(String(b));
    }
  });
});
