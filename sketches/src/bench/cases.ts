import { DDSketch as OracleSketch } from "@datadog/sketches-js";
import HyperLogLog32 from "hyperloglog32";
import { ertlEstimate } from "../hll-estimator.js";
import { DDSketch, HyperLogLog, RequestAggregate } from "../index.js";
import { sample, seededRandom } from "./distributions.js";
import type { Row } from "./report.js";
import { nsPerOp, retainedBytesPer } from "./timing.js";

const DD = "@datadog/sketches-js 2.1.1";
const HLL = "hyperloglog32 1.0.0";

function ours(values: Float64Array): DDSketch {
  const s = new DDSketch();
  for (const v of values) s.add(v);
  return s;
}
function theirs(values: Float64Array): OracleSketch {
  const s = new OracleSketch({ relativeAccuracy: 0.01 });
  for (const v of values) s.accept(v);
  return s;
}

export function ddsketchRows(): Row[] {
  const values = sample("lognormal", 500_000, 1);
  const addOurs = nsPerOp(() => ours(values), values.length);
  const addTheirs = nsPerOp(() => theirs(values), values.length);
  const five = sample("lognormal", 5000, 2);
  const [a, b] = [ours(five), ours(sample("lognormal", 5000, 3))];
  const [ta, tb] = [theirs(five), theirs(sample("lognormal", 5000, 3))];
  const mergeN = 2000;
  const mergeOurs =
    nsPerOp(() => {
      for (let i = 0; i < mergeN; i++) a.merge(b);
    }, mergeN) / 1000;
  const mergeTheirs =
    nsPerOp(() => {
      for (let i = 0; i < mergeN; i++) ta.merge(tb);
    }, mergeN) / 1000;
  const enc = ours(five).encode();
  const proto = theirs(five).toProto();
  const codecN = 2000;
  const s5 = ours(five);
  const t5 = theirs(five);
  const PANE_QS = [0.5, 0.9, 0.95, 0.99, 0.999];
  const qn = 20_000;
  const paneOne =
    nsPerOp(() => {
      for (let i = 0; i < qn; i++) for (const q of PANE_QS) s5.quantile(q);
    }, qn) / 1000;
  const rows: Row[] = [
    {
      what: "DDSketch add (500k lognormal)",
      unit: "ns",
      ours: addOurs,
      baseline: { name: `${DD} accept`, value: addTheirs },
      target: 40,
      ratioTarget: 1,
    },
    {
      what: "DDSketch 5 pane quantiles (5k lognormal), quantiles()",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < qn; i++) s5.quantiles(PANE_QS);
        }, qn) / 1000,
      baseline: {
        name: `${DD} getValueAtQuantile ×5`,
        value:
          nsPerOp(() => {
            for (let i = 0; i < qn; i++) for (const q of PANE_QS) t5.getValueAtQuantile(q);
          }, qn) / 1000,
      },
    },
    { what: "DDSketch 5 pane quantiles (5k lognormal), quantile() ×5", unit: "µs", ours: paneOne },
    {
      what: "DDSketch merge (5k + 5k lognormal)",
      unit: "µs",
      ours: mergeOurs,
      baseline: { name: DD, value: mergeTheirs },
    },
    {
      what: "DDSketch encode (5k lognormal)",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < codecN; i++) s5.encode();
        }, codecN) / 1000,
      baseline: {
        name: `${DD} toProto`,
        value:
          nsPerOp(() => {
            for (let i = 0; i < codecN; i++) t5.toProto();
          }, codecN) / 1000,
      },
    },
    {
      what: "DDSketch decode (5k lognormal)",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < codecN; i++) DDSketch.decode(enc);
        }, codecN) / 1000,
      baseline: {
        name: `${DD} fromProto`,
        value:
          nsPerOp(() => {
            for (let i = 0; i < codecN; i++) OracleSketch.fromProto(proto);
          }, codecN) / 1000,
      },
    },
  ];
  for (const n of [10, 1000, 5000, 100_000]) {
    const v = sample("lognormal", n, 10 + n);
    rows.push({
      what: `DDSketch encoded size, ${n} lognormal`,
      unit: "B",
      ours: ours(v).encode().length,
      baseline: { name: `${DD} toProto`, value: theirs(v).toProto().length },
      ...(n === 5000 ? { ratioTarget: 1 / 3 } : {}),
    });
  }
  return rows;
}

function userIds(n: number, distinct: number, seed: number): string[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, () => `user-${Math.floor(rand() * distinct)}`);
}

/** Registers of a dense p=14 sketch from its documented encoding (4-byte header, 6 bits each). */
function denseRegisters(enc: Uint8Array): Uint8Array {
  const regs = new Uint8Array(1 << 14);
  for (let i = 0, j = 4; i < regs.length; i += 4, j += 3) {
    const v = (enc[j] as number) | ((enc[j + 1] as number) << 8) | ((enc[j + 2] as number) << 16);
    for (let k = 0; k < 4; k++) regs[i + k] = (v >>> (6 * k)) & 63;
  }
  return regs;
}

/** What estimate() did before the histogram was kept: count the registers, then Ertl's estimator. */
function recountEstimate(regs: Uint8Array): number {
  const q = 53 - 14;
  const histogram = new Float64Array(q + 2);
  for (const r of regs) histogram[r] = (histogram[r] as number) + 1;
  return ertlEstimate(histogram, regs.length, q);
}

export function hyperLogLogRows(): Row[] {
  const ids = userIds(500_000, 200_000, 4);
  const hashes = ids.map((u) => HyperLogLog.hash(u));
  const addOurs = nsPerOp(() => {
    const h = new HyperLogLog();
    for (const u of ids) h.add(u);
  }, ids.length);
  const addTheirs = nsPerOp(() => {
    const h = HyperLogLog32(14);
    for (const u of ids) h.add(u);
  }, ids.length);
  const addHash = nsPerOp(() => {
    const h = new HyperLogLog();
    for (const x of hashes) h.addHash(x);
  }, hashes.length);
  const sparseAdds = nsPerOp(() => {
    for (let s = 0; s < ids.length; s += 10) {
      const h = new HyperLogLog();
      for (let i = s; i < s + 10; i++) h.addHash(hashes[i] as number);
    }
  }, ids.length);
  const [a, b] = [new HyperLogLog(), new HyperLogLog()];
  const [ta, tb] = [HyperLogLog32(14), HyperLogLog32(14)];
  ids.forEach((u, i) => (i % 2 ? (a.add(u), ta.add(u)) : (b.add(u), tb.add(u))));
  const n = 500;
  const enc = a.encode();
  const regs = denseRegisters(enc);
  if (recountEstimate(regs) !== a.estimate())
    throw new Error("the kept histogram disagrees with a recount of the registers");
  const rows: Row[] = [
    {
      what: "HLL add, string (p=14, dense, 500k adds)",
      unit: "ns",
      ours: addOurs,
      baseline: { name: `${HLL} add`, value: addTheirs },
      target: 60,
    },
    { what: "HLL addHash, pre-hashed (dense)", unit: "ns", ours: addHash },
    { what: "HLL addHash into fresh sparse sketches, 10 users each", unit: "ns", ours: sparseAdds },
    {
      what: "HLL merge, dense p=14",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < n; i++) a.merge(b);
        }, n) / 1000,
      baseline: {
        name: HLL,
        value:
          nsPerOp(() => {
            for (let i = 0; i < n; i++) ta.merge(tb);
          }, n) / 1000,
      },
    },
    {
      what: "HLL estimate, dense p=14 (register histogram kept on each change)",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < n; i++) a.estimate();
        }, n) / 1000,
      baseline: {
        name: "the former estimate: histogram of the 2^14 registers, then Ertl",
        value:
          nsPerOp(() => {
            for (let i = 0; i < n; i++) recountEstimate(regs);
          }, n) / 1000,
      },
    },
    {
      what: "HLL encode, dense p=14",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < n; i++) a.encode();
        }, n) / 1000,
    },
    {
      what: "HLL decode, dense p=14",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < n; i++) HyperLogLog.decode(enc);
        }, n) / 1000,
    },
    {
      what: "HLL encoded size, dense p=14",
      unit: "B",
      ours: enc.length,
      baseline: { name: `${HLL} state()`, value: ta.state().length },
    },
  ];
  for (const distinct of [1_000, 100_000, 1_000_000]) {
    const h = new HyperLogLog();
    const t = HyperLogLog32(14);
    for (let i = 0; i < distinct; i++) {
      const u = `acc-${i}`;
      h.add(u);
      t.add(u);
    }
    const err = (e: number) => (100 * Math.abs(e - distinct)) / distinct;
    rows.push({
      what: `HLL relative error at ${distinct} distinct (3σ = 2.44%)`,
      unit: "%",
      ours: err(h.estimate()),
      baseline: { name: HLL, value: err(t.count()) },
      target: 2.44,
    });
  }
  return rows;
}

function tenRequests(i: number): RequestAggregate {
  const a = new RequestAggregate();
  const rand = seededRandom(i);
  for (let k = 0; k < 10; k++) a.add(Math.exp(Math.log(50) + 2 * (rand() - 0.5)), k === 3, `user-${i}-${k}`);
  return a;
}

function requests(count: number, seed: number): RequestAggregate {
  const a = new RequestAggregate();
  const rand = seededRandom(seed);
  for (let k = 0; k < count; k++) a.add(Math.exp(Math.log(50) + (rand() - 0.5) * 4), k % 10 === 0, `user-${seed}-${k}`);
  return a;
}

export function aggregateRows(): Row[] {
  const n = 30_000;
  const a = tenRequests(1);
  const b = tenRequests(2);
  const enc = a.encode();
  const heap = retainedBytesPer(tenRequests, n);
  const theirHeap = retainedBytesPer((i) => {
    const s = new OracleSketch({ relativeAccuracy: 0.01 });
    const rand = seededRandom(i);
    for (let k = 0; k < 10; k++) s.accept(Math.exp(Math.log(50) + 2 * (rand() - 0.5)));
    return s;
  }, n);
  const m = 20_000;
  return [
    {
      what: "Aggregate heap, 10 requests / 10 users (measured)",
      unit: "B",
      ours: heap,
      baseline: { name: `${DD} DDSketch alone`, value: theirHeap },
      target: 400,
    },
    { what: "Aggregate heapBytes() estimate, same aggregate", unit: "B", ours: a.heapBytes() },
    ...[100, 1000, 5000].flatMap((count): Row[] => [
      {
        what: `Aggregate heap, ${count} requests / ${count} users (measured)`,
        unit: "B",
        ours: retainedBytesPer((i) => requests(count, i), 200_000 / count),
      },
      {
        // The mean over the same seeds: from ~5 000 users one in a few has a register past 15 (6-bit, larger) registers.
        what: `Aggregate heapBytes() estimate, same aggregates (mean)`,
        unit: "B",
        ours: meanHeapBytes((i) => requests(count, i), 200_000 / count),
      },
    ]),
    { what: "Aggregate encoded size, 10 requests", unit: "B", ours: enc.length },
    {
      what: "Aggregate merge, 10 + 10 requests",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < m; i++) a.clone().merge(b);
        }, m) / 1000,
    },
    {
      what: "Aggregate encode, 10 requests",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < m; i++) a.encode();
        }, m) / 1000,
    },
    {
      what: "Aggregate decode, 10 requests",
      unit: "µs",
      ours:
        nsPerOp(() => {
          for (let i = 0; i < m; i++) RequestAggregate.decode(enc);
        }, m) / 1000,
    },
  ];
}

/** Mean heapBytes() of the aggregates `make` builds for i = 0 … n − 1 (what retainedBytesPer measures). */
function meanHeapBytes(make: (i: number) => { heapBytes(): number }, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += make(i).heapBytes();
  return sum / n;
}
