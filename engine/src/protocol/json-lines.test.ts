import { describe, expect, it } from "vitest";
import type { Pane } from "../protocol.js";
import { JsonLines } from "./json-lines.js";
import { encodePaneBatch } from "./pane-batch.js";
import {
  oddValuesRecord,
  randomLate,
  randomPane,
  SPECIAL_NUMBERS,
  SPECIAL_STRINGS,
} from "./__fixtures__/random-records.js";

/** What the batch was before: JSON.stringify per record, joined by newlines, as UTF-8. */
function expected(records: readonly unknown[]): { bytes: Uint8Array; units: number } {
  const text = encodePaneBatch(records.map((r) => JSON.stringify(r)));
  return { bytes: new TextEncoder().encode(text), units: text.length };
}

function written(records: readonly object[], initialBytes?: number): { bytes: Uint8Array; units: number[] } {
  const w = new JsonLines(initialBytes);
  const units = records.map((r) => w.add(r));
  return { bytes: w.body(), units };
}

/** Equal bytes; on a difference the failure shows both texts (lone surrogates are escaped, so UTF-8 round-trips). */
function expectSame(got: Uint8Array, want: Uint8Array, what: string): void {
  if (Buffer.from(got).equals(Buffer.from(want))) return;
  expect(Buffer.from(got).toString("utf8"), what).toBe(Buffer.from(want).toString("utf8"));
  expect(Buffer.from(got).toString("hex"), what).toBe(Buffer.from(want).toString("hex"));
}

describe("JsonLines", () => {
  it("writes random panes byte for byte as JSON.stringify joined by newlines, as UTF-8", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const panes = Array.from({ length: 1 + (seed % 5) }, (_, i) => randomPane(seed * 10 + i));
      const got = written(panes, 16);
      const want = expected(panes);
      expectSame(got.bytes, want.bytes, `seed ${seed}`);
      expect(got.units, `seed ${seed}`).toEqual(panes.map((p) => JSON.stringify(p).length));
    }
  });

  it("writes a deeply frozen object's JSON once and copies it after; anything that can change is written each time", () => {
    // Shared and frozen, as a pane's bias is: the second and later panes copy its text.
    const spread = Object.freeze({ countPct: 1.5, errorRatePp: null, p99Pct: 0.1 + 0.2, usersPct: null });
    const bias = Object.freeze({ countPct: -2.25, windows: 3, spread, stage: "early", note: "é\u2028\ud800" });
    // Frozen but holding a plain object that is not: written each time, with its changes.
    const open = { n: 1 };
    const shell = Object.freeze({ open, list: Object.freeze([1, open]) });
    // Frozen with an accessor: what it returns may change, so it is never copied.
    let reads = 0;
    const getter = Object.freeze(Object.defineProperty({}, "g", { get: () => ++reads, enumerable: true }));
    const records: object[] = [];
    for (let i = 0; i < 4; i++) {
      open.n = i;
      records.push({ seq: i, bias, shell, getter, again: bias });
    }
    const w = new JsonLines(16);
    const units = records.map((r) => w.add(r));
    reads = 0;
    expectSame(w.body(), expected(records).bytes, "frozen");
    expect(units).toEqual(records.map((r) => JSON.stringify(r).length));
    expect(Buffer.from(w.body()).toString("utf8")).toContain('"open":{"n":3}');
  });

  it("writes random late records the same way, mixed with panes in one body", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const records = Array.from({ length: 6 }, (_, i) =>
        i % 2 ? randomLate(seed * 7 + i) : randomPane(seed * 7 + i),
      );
      expectSame(written(records).bytes, expected(records).bytes, `seed ${seed}`);
    }
  });

  it("writes every special number and string as JSON.stringify does", () => {
    const records = [
      ...SPECIAL_NUMBERS.map((n) => ({ n, a: [n] })),
      ...SPECIAL_STRINGS.map((s) => ({ [s]: s, k: s })),
      ...SPECIAL_STRINGS.map((s) => ({ k: s, [s]: { [s]: 1, [`${s}2`]: [s] } })),
    ];
    for (const r of records) {
      const got = written([r]);
      expectSame(got.bytes, expected([r]).bytes, JSON.stringify(r));
      expect(got.units).toEqual([JSON.stringify(r).length]);
    }
  });

  it("leaves out of objects what JSON leaves out, writes null for it in arrays, and defers to JSON.stringify for the rest", () => {
    const r = oddValuesRecord();
    expectSame(written([r]).bytes, expected([r]).bytes, "odd values");
  });

  it("refuses what JSON.stringify refuses", () => {
    expect(() => new JsonLines().add({ big: 1n })).toThrow();
  });

  it("cuts a body before a line and keeps the rest for the next one", () => {
    const a = randomPane(1);
    const b = randomPane(2);
    const c = randomPane(3);
    const w = new JsonLines(8);
    w.add(a);
    const mark = w.length;
    const units = w.units;
    const ub = w.add(b);
    expect(w.units).toBe(units + 1 + ub);
    const head = w.cut(mark, ub, 1);
    expectSame(head, expected([a]).bytes, "head");
    w.add(c);
    expectSame(w.body(), expected([b, c]).bytes, "kept + next");
    expect(w.units).toBe(expected([b, c]).units);
    w.reset();
    w.add(a);
    expectSame(w.body(), expected([a]).bytes, "after reset");
  });

  it("hands bodies over without copying and never writes into a buffer it handed over", () => {
    const given: ArrayBuffer[] = [];
    const taken: ArrayBuffer[] = [];
    const pool = {
      take: (bytes: number): Uint8Array => {
        const reused = given.findIndex((b) => b.byteLength >= bytes);
        const b = reused >= 0 ? (given.splice(reused, 1)[0] as ArrayBuffer) : new ArrayBuffer(bytes);
        taken.push(b);
        return new Uint8Array(b);
      },
      give: (b: ArrayBuffer): void => void given.push(b),
    };
    const w = new JsonLines(32, pool);
    const records = Array.from({ length: 30 }, (_, i) => randomPane(100 + i));
    const bodies: Array<{ bytes: Uint8Array; copy: Uint8Array; records: Pane[] }> = [];
    let open: Pane[] = [];
    records.forEach((r, i) => {
      const mark = w.length;
      const units = w.add(r);
      open.push(r);
      if (i % 7 === 6) {
        const head = w.cut(mark, units, 1);
        bodies.push({ bytes: head, copy: head.slice(), records: open.slice(0, -1) });
        open = [r];
      } else if (i % 5 === 4) {
        const body = w.take();
        bodies.push({ bytes: body, copy: body.slice(), records: open });
        open = [];
      }
    });
    w.release();
    expect(given.length).toBeGreaterThan(0);
    for (const b of bodies) {
      expect(b.bytes.byteOffset).toBe(0);
      expectSame(b.copy, expected(b.records).bytes, "as handed over");
      expectSame(b.bytes, b.copy, "untouched after");
    }
    // What was handed over is the caller's: never given back to be taken again.
    for (const b of bodies) expect(given.includes(b.bytes.buffer as ArrayBuffer)).toBe(false);
    expect(taken.length).toBeGreaterThan(bodies.length);
  });

  it("copies a body that fills less than a quarter of its buffer and keeps the buffer for the next one", () => {
    const taken: Uint8Array[] = [];
    const pool = {
      take: (bytes: number): Uint8Array => {
        const b = new Uint8Array(Math.max(bytes, 64 * 1024));
        taken.push(b);
        return b;
      },
      give: (): void => undefined,
    };
    const w = new JsonLines(1024, pool);
    const small = randomPane(7);
    w.add(small);
    const body = w.take();
    expect(body.buffer).not.toBe(taken[0]?.buffer);
    expect(body.buffer.byteLength).toBe(body.length);
    expectSame(body, expected([small]).bytes, "short body");
    w.add(small);
    expect(taken.length).toBe(1); // the writer kept its buffer
    const big = Array.from({ length: 400 }, (_, i) => randomPane(200 + i));
    for (const r of big.slice(1)) w.add(r);
    const full = w.take();
    expect(full.buffer).toBe(taken.at(-1)?.buffer); // a full one is handed over as it is
    expectSame(full, expected([small, ...big.slice(1)]).bytes, "full body");
  });
});
