import { cpus, totalmem } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Best-of-rounds time per operation in ns: `run` performs `ops` operations once. A warm-up round
 * runs first so both sides are measured optimized; the minimum is the least disturbed round.
 */
export function nsPerOp(run: () => void, ops: number, rounds = 5): number {
  run();
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    run();
    const ns = Number(process.hrtime.bigint() - t0) / ops;
    if (ns < best) best = ns;
  }
  return best;
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function usedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Steady-state retained heap (V8 heap + off-heap buffers) per object, over `n` live objects built by `make`. */
export function retainedBytesPer(make: (i: number) => unknown, n: number): number {
  // Warm-up: compiled code and type feedback are allocated once, not per object.
  for (let i = 0; i < 2000; i++) make(i);
  const keep: unknown[] = new Array(n).fill(null);
  const before = usedBytes();
  for (let i = 0; i < n; i++) keep[i] = make(i);
  const after = usedBytes();
  if (keep.length !== n) throw new Error("unreachable: keeps the objects alive");
  return (after - before) / n;
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version} (V8 ${process.versions.v8}), ${process.platform}-${process.arch}`;
}
