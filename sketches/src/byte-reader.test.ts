import { describe, expect, it } from "vitest";
import { encodeWith, type ByteWriter } from "./byte-writer.js";
import { decodeReusing, type ByteReader } from "./byte-reader.js";
import { SketchError } from "./errors.js";

const bytesOf = (...xs: number[]): Uint8Array => encodeWith((w: ByteWriter) => xs.forEach((x) => w.varint(x)));
const two = (r: ByteReader): [number, number] => [r.varint(), r.varint()];

describe("decodeReusing", () => {
  it("reads each range as a fresh reader would, after a failed decode too", () => {
    const good = bytesOf(300, 7);
    expect(decodeReusing(good, "pair", two, 0, good.length)).toEqual([300, 7]);
    // Truncated, then trailing bytes: both throw, and the next decode starts clean.
    expect(() => decodeReusing(good, "pair", two, 0, good.length - 1)).toThrow(SketchError);
    const long = bytesOf(1, 2, 3);
    expect(() => decodeReusing(long, "pair", two, 0, long.length)).toThrow(/1 trailing bytes/);
    expect(decodeReusing(long, "pair", two, 1, 3)).toEqual([2, 3]);
  });

  it("a decode nested in another gets its own reader", () => {
    const inner = bytesOf(5, 6);
    const outer = bytesOf(1, 2);
    const got = decodeReusing(
      outer,
      "outer",
      (r) => {
        const a = r.varint();
        const nested = decodeReusing(inner, "inner", two, 0, inner.length);
        return [a, r.varint(), ...nested];
      },
      0,
      outer.length,
    );
    expect(got).toEqual([1, 2, 5, 6]);
  });
});
