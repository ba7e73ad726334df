import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CHUNK_BYTES, SLAB_MAX, slabBytes, slabCopy } from "./byte-slab.js";
import { HyperLogLog } from "./hyperloglog.js";

describe("byte slab: sketch buffers cut from shared chunks", () => {
  it("hands out zero-filled regions that never overlap: writes to one leave every other as written", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: SLAB_MAX + 64 }), fc.integer({ min: 0, max: 255 })), {
          maxLength: 80,
        }),
        (asks) => {
          const views: Uint8Array[] = [];
          const model: Uint8Array[] = [];
          for (const [n, fill] of asks) {
            const v = slabBytes(n);
            expect(v.length).toBe(n);
            expect(v.every((b) => b === 0)).toBe(true);
            // Within the slab's bound a view into a chunk, else a buffer of its own.
            expect(v.buffer.byteLength).toBe(n > 0 && n <= SLAB_MAX ? CHUNK_BYTES : n);
            v.fill(fill);
            if (n > 0) v[n - 1] = fill ^ 0x5a;
            views.push(v);
            model.push(v.slice());
          }
          views.forEach((v, i) => expect(v).toEqual(model[i]));
          const copies = views.map((v) => slabCopy(v));
          copies.forEach((c) => c.fill(7));
          views.forEach((v, i) => expect(v).toEqual(model[i]));
        },
      ),
    );
  });

  it("a HyperLogLog whose registers sit in a chunk answers as one built again from its bytes, through clones and merges", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 12 }),
        fc.array(fc.array(fc.string(), { maxLength: 400 }), { minLength: 1, maxLength: 6 }),
        (precision, batches) => {
          const sketches = batches.map((users) => {
            const h = new HyperLogLog({ precision });
            for (const u of users) h.add(u);
            return h;
          });
          const merged = sketches[0]!.clone();
          for (const s of sketches.slice(1)) merged.merge(s.clone());
          // The same users into one sketch: the same registers, estimate and bytes.
          const all = new HyperLogLog({ precision });
          for (const users of batches) for (const u of users) all.add(u);
          expect(merged.encode()).toEqual(all.encode());
          expect(merged.estimate()).toBe(all.estimate());
          const back = HyperLogLog.decode(merged.encode());
          expect(back.encode()).toEqual(all.encode());
          expect(back.estimate()).toBe(all.estimate());
        },
      ),
      { numRuns: 60 },
    );
  });
});
