/**
 * The binary pane encoding (docs/protocol.md, "Pane bodies"): decoded and written as JSON, a body
 * gives byte for byte the JSON the JSON path (JsonLines, itself checked against JSON.stringify)
 * writes for the same records; refusals name the version or the byte.
 */
import { describe, expect, it } from "vitest";
import type { Pane } from "../protocol.js";
import { JsonLines } from "./json-lines.js";
import { numberBytes, PANE_BODY_VERSION } from "./pane-encoding.js";
import { PaneRecords } from "./pane-records.js";
import { MAX_DEPTH, PaneBodyError, readPaneRecords } from "./pane-records-read.js";
import {
  gen,
  oddValuesRecord,
  randomLate,
  randomPane,
  SPECIAL_NUMBERS,
  SPECIAL_STRINGS,
} from "./__fixtures__/random-records.js";

/** A random pane with what the plain generator leaves out: all-services and session keys, optional fields. */
function fullPane(seed: number): Pane {
  const g = gen(seed + 1_000_000);
  const p = randomPane(seed);
  if (g.num() > 0)
    p.key = g.pick([{ service: "*" }, { service: "*", route: g.str() }, { service: g.str(), user: "*" }]);
  if (g.maybe(1) !== undefined) Object.assign(p, { latencyAbove: { [String(g.num())]: g.num(), "250": g.num() } });
  if (g.maybe(1) !== undefined) p.sessions = { events: g.num() };
  if (g.maybe(1) !== undefined) Object.assign(p.value, { p50: NaN, p90: NaN, p95: NaN, p99: NaN, p999: NaN, count: 0 });
  return p;
}

const binary = (records: readonly object[], initial = 16): Uint8Array => {
  const w = new PaneRecords(initial);
  for (const r of records) w.add(r);
  return w.body();
};

const json = (records: readonly object[]): string => {
  const w = new JsonLines(16);
  for (const r of records) w.add(r);
  return Buffer.from(w.body()).toString("utf8");
};

const asJson = (body: Uint8Array): string =>
  readPaneRecords(body)
    .map((r) => JSON.stringify(r))
    .join("\n");

const refusal = (body: Uint8Array): PaneBodyError => {
  try {
    readPaneRecords(body);
  } catch (err) {
    return err as PaneBodyError;
  }
  throw new Error("the body was read");
};

describe("PaneRecords", () => {
  it("decodes to the JSON path's bytes over 20,000 random panes and late records in bodies of 1-60", () => {
    let records = 0;
    for (let seed = 1; records < 20_000; seed++) {
      const n = 1 + (seed % 60);
      const body = Array.from({ length: n }, (_, i) =>
        i % 5 === 3 ? randomLate(seed * 100 + i) : fullPane(seed * 100 + i),
      );
      records += n;
      expect(asJson(binary(body)), `seed ${seed}`).toBe(json(body));
    }
  });

  it("writes every special number and string as JSON does, in values and in keys", () => {
    const records = [
      ...SPECIAL_NUMBERS.map((n) => ({ n, a: [n, [n]] })),
      ...SPECIAL_STRINGS.map((s) => ({ [s]: s, k: s, again: [s, s] })),
      ...SPECIAL_STRINGS.map((s) => ({ k: s, [s]: { [s]: 1, [`${s}2`]: [s] } })),
      { long: "x".repeat(70_000), wide: "é".repeat(70_000) },
    ];
    for (const r of records) expect(asJson(binary([r])), JSON.stringify(r)).toBe(json([r]));
    expect(asJson(binary(records))).toBe(json(records));
  });

  it("leaves out of objects what JSON leaves out, writes null for it in arrays, and follows toJSON", () => {
    const r = { ...oddValuesRecord(), ["__proto__"]: "a key like any other" };
    Object.defineProperty(r, "__proto__", { value: { own: 1 }, enumerable: true });
    expect(asJson(binary([r]))).toBe(json([r]));
    expect(() => new PaneRecords().add({ big: 1n })).toThrow();
  });

  it("writes a record restored from its JSON to the same bytes (a restored group cuts the same chunks)", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const records: object[] = [fullPane(seed), randomLate(seed), fullPane(seed + 7)];
      const again = records.map((r) => JSON.parse(JSON.stringify(r)) as object);
      expect(Buffer.from(binary(again)).equals(Buffer.from(binary(records))), `seed ${seed}`).toBe(true);
    }
  });

  it("counts a number's bytes as it writes them", () => {
    for (const n of [...SPECIAL_NUMBERS, 127, 128, 2 ** 31 - 1, 2 ** 31, 2 ** 35, -1, -128, 16_383, 16_384]) {
      const w = new PaneRecords();
      const without = w.add({ a: "x" });
      w.reset();
      expect(w.add({ a: "x", n }) - without - 3, String(n)).toBe(numberBytes(n)); // 3: the key "n", new
    }
  });

  it("takes the last record back out with the strings it brought, so the next body defines them again", () => {
    const [a, b] = [fullPane(1), fullPane(2)];
    const w = new PaneRecords(8);
    w.add(a);
    w.add(b);
    w.dropLast();
    expect(w.lines).toBe(1);
    const first = w.take();
    expect(Buffer.from(first).equals(Buffer.from(binary([a])))).toBe(true);
    w.add(b);
    expect(asJson(w.body())).toBe(json([b]));
    expect(Buffer.from(w.body()).equals(Buffer.from(binary([b])))).toBe(true);
  });

  it("stays exact across bodies when objects have keys of their own (the shape trie is bounded and dropped)", () => {
    const w = new PaneRecords();
    for (let body = 0; body < 40; body++) {
      const records = Array.from({ length: 30 }, (_, i) => ({
        id: `${body}-${i}`,
        latencyAbove: Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`${body * 1000 + i * 10 + k}`, k])),
        nested: { [`k${(body * 31 + i) % 50}`]: { a: i, [`b${i % 3}`]: [body, { c: null }] } },
      }));
      for (const r of records) w.add(r);
      expect(asJson(w.take()), `body ${body}`).toBe(json(records));
    }
  });

  it("is several times smaller than the JSON of panes that share their strings", () => {
    const panes = Array.from({ length: 200 }, (_, i) => {
      const p = fullPane(1);
      p.seq = i;
      p.id = `dashboard|api|10000|${i * 10_000}`;
      p.value = { ...p.value, count: i, p99: 41.79065066782366 + i };
      return p;
    });
    expect(binary(panes).length * 2).toBeLessThan(Buffer.byteLength(json(panes)));
  });
});

describe("reading a binary pane body", () => {
  const one = binary([fullPane(3), randomLate(3)]);

  it("refuses a newer version with an error naming it, and a version never written", () => {
    const newer = one.slice();
    newer[4] = PANE_BODY_VERSION + 1;
    const e = refusal(newer);
    expect(e.code).toBe("TM_PANE_BODY_VERSION");
    expect(e.message).toContain(`version ${PANE_BODY_VERSION + 1} is newer than this reader`);
    const zero = one.slice();
    zero[4] = 0;
    expect(refusal(zero).code).toBe("TM_PANE_BODY_MALFORMED");
  });

  it("refuses a body cut short at any byte, an unknown tag and a string it never defined, naming the byte", () => {
    for (let end = 5; end < one.length; end++) {
      let read: unknown[] | undefined;
      try {
        read = readPaneRecords(one.subarray(0, end));
      } catch (err) {
        expect((err as PaneBodyError).code, `cut at ${end}`).toBe("TM_PANE_BODY_MALFORMED");
        continue;
      }
      // A cut between records reads the records before it.
      expect(read.length, `cut at ${end}`).toBeLessThan(2);
    }
    expect(refusal(Uint8Array.of(...one.subarray(0, 5), 0x0e)).message).toMatch(/byte 6 holds tag 0xe/);
    expect(refusal(Uint8Array.of(...one.subarray(0, 5), 0x08, 0x00)).message).toMatch(/names string 0 of 0/);
  });

  it("refuses nesting past MAX_DEPTH", () => {
    const nested = Array.from({ length: MAX_DEPTH + 1 }, () => [0x09, 0x01]).flat();
    const deep = Uint8Array.of(...one.subarray(0, 5), ...nested);
    expect(refusal(deep).message).toMatch(new RegExp(`nests deeper than ${MAX_DEPTH}`));
  });
});
