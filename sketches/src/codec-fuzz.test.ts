import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sample } from "./bench/distributions.js";
import { DDSketch } from "./ddsketch.js";
import { isCodecError } from "./errors.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";

interface Codec {
  decode(bytes: Uint8Array): { encode(): Uint8Array };
}
const CODECS: [string, Codec][] = [
  ["DDSketch", DDSketch],
  ["HyperLogLog", HyperLogLog],
  ["RequestAggregate", RequestAggregate],
];

/** Valid encodings of every shape: empty, zeros only, sparse, dense, custom options. */
function validEncodings(): Map<string, Uint8Array[]> {
  const lat = sample("lognormal", 3000, 11);
  const dds = [new DDSketch(), new DDSketch({ relativeAccuracy: 0.05 }), new DDSketch()];
  dds[1]?.add(0);
  for (const v of lat) dds[2]?.add(v);
  const hlls = [new HyperLogLog(), new HyperLogLog({ precision: 6 }), new HyperLogLog({ precision: 8 })];
  for (let i = 0; i < 20; i++) hlls[1]?.add(`u${i}`);
  for (let i = 0; i < 5000; i++) hlls[2]?.add(`u${i}`);
  const aggs = [new RequestAggregate(), new RequestAggregate({ hllPrecision: 8 })];
  for (let i = 0; i < 400; i++) aggs[1]?.add(lat[i] as number, i % 9 === 0, `u${i % 50}`);
  return new Map([
    ["DDSketch", dds.map((s) => s.encode())],
    ["HyperLogLog", hlls.map((s) => s.encode())],
    ["RequestAggregate", aggs.map((s) => s.encode())],
  ]);
}

/** Either a codec error, or the bytes are the canonical encoding of what came back: never a wrong sketch. */
function decodesHonestly(codec: Codec, bytes: Uint8Array): "threw" | "valid" {
  let decoded: { encode(): Uint8Array };
  try {
    decoded = codec.decode(bytes);
  } catch (e) {
    if (!isCodecError(e)) throw new Error(`decode threw a non-codec error: ${String(e)}`);
    return "threw";
  }
  expect(decoded.encode()).toEqual(bytes);
  return "valid";
}

describe.each(CODECS)("%s decode", (name, codec) => {
  const valid = validEncodings().get(name) ?? [];

  it("throws a codec error on every strict prefix of a valid encoding", () => {
    for (const bytes of valid) {
      expect(decodesHonestly(codec, bytes)).toBe("valid");
      for (let n = 0; n < bytes.length; n++) {
        let err: unknown;
        try {
          codec.decode(bytes.subarray(0, n));
        } catch (e) {
          err = e;
        }
        expect(isCodecError(err), `prefix of ${n}/${bytes.length} bytes`).toBe(true);
      }
    }
  });

  it("throws a codec error on random bytes (or they are exactly a canonical encoding)", () => {
    let threw = 0;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        if (decodesHonestly(codec, bytes) === "threw") threw++;
      }),
      { numRuns: 2000 },
    );
    expect(threw).toBeGreaterThan(1900);
  });

  it("survives random byte flips of valid encodings: codec error or a canonical sketch", () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), (which, pos, xor) => {
        const base = valid[which % valid.length] as Uint8Array;
        const bytes = base.slice();
        const i = pos % bytes.length;
        bytes[i] = (bytes[i] as number) ^ xor;
        decodesHonestly(codec, bytes);
      }),
      { numRuns: 1500 },
    );
  });

  it("rejects trailing bytes and a future format version with their codes", () => {
    const bytes = valid[0] as Uint8Array;
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expect(() => codec.decode(longer)).toThrow(expect.objectContaining({ code: "TM_SKETCH_CODEC_CORRUPT" }));
    const future = bytes.slice();
    future[0] = 2;
    expect(() => codec.decode(future)).toThrow(expect.objectContaining({ code: "TM_SKETCH_CODEC_VERSION" }));
  });
});
