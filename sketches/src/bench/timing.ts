import { cpus, totalmem } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * Best-of-rounds CPU time per operation in ns: `run` performs `ops` operations once. CPU time
 * (user + system, all threads of this process) rather than wall time, because the machine is
 * shared: other processes' load does not count, GC and JIT work caused by `run` does. A warm-up
 * round runs first so both sides are measured optimized; the minimum is the least disturbed round.
 */
export function nsPerOp(run: () => void, ops: number, rounds = 5): number {
  run();
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    const ns = ((used.user + used.system) * 1000) / ops;
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

/** Median of 3 measurements of the steady-state retained heap per object (see retainedOnce). */
export function retainedBytesPer(make: (i: number) => unknown, n: number): number {
  const runs = [retainedOnce(make, n), retainedOnce(make, n), retainedOnce(make, n)].sort((a, b) => a - b);
  return runs[1] as number;
}

/** Retained heap (V8 heap + off-heap buffers) per object, over `n` live objects built by `make`. */
function retainedOnce(make: (i: number) => unknown, n: number): number {
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
