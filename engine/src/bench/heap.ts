/** Heap measurements for the benchmarks: a forced GC and the memory in use after it. */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
/** A full garbage collection (the flag set above, read in a fresh context). */
export const gc = runInNewContext("gc") as () => void;

/** Heap in use plus typed-array backing stores (V8 keeps those off its heap: heapUsed alone misses them). */
export function memoryInUse(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
