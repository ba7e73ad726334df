/**
 * Golden bytes: the encodings of fixed inputs, committed here. Sketches go into every checkpoint,
 * so a change to any encoding (or to the user hash, which decides the HyperLogLog's bytes) must be
 * deliberate: a new format version byte and a decoder for the old one (ADR 0003, "Codecs" and
 * "Consequences"). If one of these fails, the format changed: version it, do not re-pin it.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DDSketch } from "./ddsketch.js";
import { HyperLogLog } from "./hyperloglog.js";
import { RequestAggregate } from "./request-aggregate.js";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));

function sketch(values: readonly number[], relativeAccuracy?: number): DDSketch {
  const s = new DDSketch(relativeAccuracy === undefined ? {} : { relativeAccuracy });
  for (const v of values) s.add(v);
  return s;
}

function users(n: number, precision: number): HyperLogLog {
  const h = new HyperLogLog({ precision });
  for (let i = 0; i < n; i++) h.add(`u${i}`);
  return h;
}

const QS = [0, 0.5, 0.9, 0.99, 1];

describe("DDSketch golden bytes", () => {
  const cases: [string, DDSketch, boolean, string][] = [
    ["empty", sketch([]), true, "014408"],
    [
      "exact form (≤ 16 values)",
      sketch([0, 1.5, 40, 40, 250.25]),
      true,
      "014409050000000000000000000000000000f83f000000000000444000000000000044400000000000486f40",
    ],
    [
      "binned form (20 values)",
      sketch(Array.from({ length: 20 }, (_, i) => (i + 1) * 3.7)),
      false,
      "0144010001000000004888409a99999999990d40000000000080524014860100012100011200010d0001090001070001" +
        "060001050001030001040001030001020001020001020001010001020001010001000001010001010001",
    ],
    [
      "custom accuracy α = 0.05",
      sketch(
        Array.from({ length: 20 }, (_, i) => (i + 1) * 3.7),
        0.05,
      ),
      false,
      "0144039a9999999999a93f0001000000004888409a99999999990d400000000000805240071c00010500010200010100" +
        "0100000100010101000901010101010201020201",
    ],
    [
      "collapsed (keys span more than 2048 bins)",
      sketch(Array.from({ length: 81 }, (_, i) => 2 ** (i - 40))),
      false,
      "0144058d0a000000000000008042000000000000703d00000000000070423c8d0a001610000121000121000121000121" +
        "000121000121000121000121000121000121000121000121000121000121000121000121000121000120000121000121" +
        "000121000121000121000121000121000121000121000121000121000121000121000121000121000121000121000121" +
        "000121000121000121000121000121000121000121000121000121000121000121000121000121000121000121000121" +
        "0001210001210001210001210001210001210001",
    ],
  ];
  it.each(cases)("%s", (_name, s, exact, golden) => {
    expect(s.isExact).toBe(exact);
    expect(hex(s.encode())).toBe(golden);
    const back = DDSketch.decode(bytes(golden));
    expect(hex(back.encode())).toBe(golden);
    expect([back.count, back.isExact]).toEqual([s.count, exact]);
    if (s.count > 0) expect(back.quantiles(QS)).toEqual(s.quantiles(QS));
  });
});

describe("HyperLogLog golden bytes", () => {
  const cases: [string, HyperLogLog, boolean, string][] = [
    ["empty (sparse)", users(0, 14), true, "01480e0000"],
    ["sparse list (5 users)", users(5, 14), true, "01480e0005c2f5d557a4eec8329be7e55aa6b7a415dbd0836d"],
    [
      "sparse table (100 users)",
      users(100, 14),
      true,
      "01480e006482e0af04e0c5b006e0f2d008c2f58101dfd4a502fe9059c082b607c0bcd804c0d8a607c0c3b701a2ed9d03" +
        "dfb5b901dfa15dc0989b04a098b504c08ea502a2f8f001bea145c0aaa016c1deb602e147a0f8f10affbcba01c0adb604" +
        "e4c3e521ddc40ffec2e90a839c970cddd88e0a80e28802a0ba8a11e0aae601a0f5db04c1b6a505bf83f207a0b28706e0" +
        "fcf905a1d45c9ff7ff03a0c7dd01e0b21ea0be8705a1f19f0ce0fe9803858964fad3ac0dc6c5c9039bd6c803dff5f30f" +
        "809f9206a0b7d104e0aedf01a397c704fecd02c1d1dd0c9fc1c6039fe1e403e0a23fa0c3fd0282f6b703e1cc8f04c08d" +
        "be059da09a088080900481ece702dfac60e5ec9501dbdbef01a155c28660bdfb950781bce604dfd8e20280d0bf16c5f6" +
        "fd02bcc3b003ffbd54a1c0a108ff8be801e0b29803a0e0ba02a0869a02c08aff0480d2d201a2ab8b02c090a202e088fe" +
        "03e2e2f801fdbaf601ffe2ac0480db84018180951aff8824e0c3ac01c4ec92069c9bcd01c1efce0a80a9539fcbb20dc0" +
        "f18b02",
    ],
    ["dense p = 4 (20 users)", users(20, 4), false, "0148040100110802700c810010411100"],
    [
      "dense p = 8 (100 users)",
      users(100, 8),
      false,
      "01480801003000800000403008000008400000804004021000c0200c0000000000000010040000008070000300000000" +
        "00000000000000000100001000000000010000401000000000000008031000c00000c0000003000c4020004001000000" +
        "0cc100000000044000080000000000080020004100040000000020004530048000080030000020004230040500040050" +
        "0800000000000000100043300000200c01500c402004011004011008000000000000000000c200004301000020000000" +
        "00802000",
    ],
  ];
  it.each(cases)("%s", (_name, h, sparse, golden) => {
    expect(h.isSparse).toBe(sparse);
    expect(hex(h.encode())).toBe(golden);
    const back = HyperLogLog.decode(bytes(golden));
    expect(hex(back.encode())).toBe(golden);
    expect([back.isSparse, back.estimate()]).toEqual([sparse, h.estimate()]);
  });

  it("dense p = 14 (3000 users): 12 292 bytes, pinned by length, header and SHA-256", () => {
    const h = users(3000, 14);
    const enc = h.encode();
    expect(h.isSparse).toBe(false);
    expect(enc.length).toBe(4 + (2 ** 14 * 6) / 8);
    expect(hex(enc.subarray(0, 16))).toBe("01480e01010000001000001000001000");
    expect(createHash("sha256").update(enc).digest("hex")).toBe(
      "5f3f9327b427b375b14d3c768785126a1ee615fc2e6d1ba8755efbfb73abd6c9",
    );
    expect(HyperLogLog.decode(enc).estimate()).toBe(h.estimate());
  });

  it("the user hash is pinned too: it decides every HyperLogLog's bytes (53-bit, UTF-16 code units)", () => {
    const vectors: [string, number][] = [
      ["", 3277175175305578],
      ["u0", 6321731356314469],
      ["alice", 4682757577046335],
      ["caf\u00e9", 3788062486320099],
      ["\u{1f680}", 3987824360744793],
    ];
    for (const [user, hash] of vectors) expect([user, HyperLogLog.hash(user)]).toEqual([user, hash]);
  });
});

describe("RequestAggregate golden bytes", () => {
  it("small aggregate (exact latencies, sparse users)", () => {
    const a = new RequestAggregate();
    a.add(12.5, false, "alice");
    a.add(80, true, "bob");
    a.add(12.5, false, "alice");
    const golden = "0141010144090300000000000029400000000000002940000000000000544001480e0002e2c5978a02bfb0c3e001";
    expect(hex(a.encode())).toBe(golden);
    const back = RequestAggregate.decode(bytes(golden));
    expect(hex(back.encode())).toBe(golden);
    expect([back.count, back.errors, back.users.estimate()]).toEqual([3, 1, a.users.estimate()]);
  });

  it("binned latencies, 25 users", () => {
    const a = new RequestAggregate();
    for (let i = 0; i < 40; i++) a.add(5 + i * 2.5, i % 7 === 0, `u${i % 25}`);
    const golden =
      "014106014401000000000000cca04000000000000014400000000000a0594021a40100011200010d0001090001070001" +
      "060001050001040001030001030001020001020001020001010001020001010001010001000001010001000001010001" +
      "0000010000010000010000010000010000010001010100000100010101000101010002010101000201010101480e0019" +
      "82e0af04e182a912fecfe70cc091e316e2869604bea1458189d718c0aae310e4c3e521bbc39836e1ab810abf83f207a1" +
      "83de0c9ff1fb05a6b7a415bae5b224a1ea8c11c0b6dd33c0cae603dfe6fe25c5f6fd02bb80a711a0e0ba0281c5861580" +
      "bec61f";
    expect(hex(a.encode())).toBe(golden);
    const back = RequestAggregate.decode(bytes(golden));
    expect(hex(back.encode())).toBe(golden);
    expect([back.count, back.errors]).toEqual([40, 6]);
    expect(back.latency.quantiles(QS)).toEqual(a.latency.quantiles(QS));
  });
});
