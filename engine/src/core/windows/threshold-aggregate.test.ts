import { describe, expect, it } from "vitest";
import { SketchError } from "@tidemark/sketches";
import { sketchAggregates } from "./sketch-aggregate.js";
import { thresholdAggregates } from "./threshold-aggregate.js";

const kind = thresholdAggregates(0.01, 14, [100, 300]);
const h = kind.hashUser("u");

describe('threshold aggregates (docs/semantics.md, "Latency thresholds")', () => {
  it("counts events strictly above each threshold; merge adds, subtract removes a prefix, the codec keeps them", () => {
    const a = kind.create();
    for (const l of [50, 100, 100.5, 300, 301, 5000]) a.add(l, false, h);
    expect(a.value().latencyAbove).toEqual({ "100": 4, "300": 2 });
    const b = kind.create();
    const r = kind.create();
    for (const l of [400, 10]) r.add(l, true, h);
    b.merge(r);
    const all = a.clone();
    all.merge(b);
    expect(all.value().latencyAbove).toEqual({ "100": 5, "300": 3 });
    all.subtract(a);
    expect(all.value().latencyAbove).toEqual({ "100": 1, "300": 1 });
    const back = kind.decode(a.encode());
    expect(back.value()).toEqual(a.value());
    let viaInto: Uint8Array = new Uint8Array();
    a.encodeInto((buf, n) => (viaInto = buf.slice(0, n)));
    expect(viaInto).toEqual(a.encode());
    // The sketch's own bytes, then one f64 per threshold.
    const plain = sketchAggregates(0.01, 14).create();
    for (const l of [50, 100, 100.5, 300, 301, 5000]) plain.add(l, false, h);
    expect(a.encode().subarray(0, -16)).toEqual(plain.encode());
  });

  it("refuses counts that cannot be (more slow events than events, or truncated)", () => {
    const a = kind.create();
    a.add(500, false, h);
    const bytes = a.encode();
    const bad = bytes.slice();
    new DataView(bad.buffer).setFloat64(bad.length - 8, 2, true);
    expect(() => kind.decode(bad)).toThrow(SketchError);
    expect(() => kind.decode(bytes.subarray(0, 10))).toThrow(SketchError);
    const small = kind.create();
    expect(() => small.subtract(a)).toThrow(SketchError);
  });
});
