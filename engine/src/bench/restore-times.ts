/** The runtime bench's restore measurement: restoreCore of one snapshot, timed, and what it holds after. */
import { restoreCore } from "../core/create-core.js";
import type { CoreConfig } from "../core/types.js";
import { gc, memoryInUse } from "./heap.js";

export interface RestoreTimes {
  /** Median of `runs` restores. */
  medianMs: number;
  /** Median CPU time of those restores (this process, all threads: the garbage collector's too). */
  medianCpuMs: number;
  /** Gc'd heap + array buffers the restored core holds (what a restore's GC must copy). */
  heldBytes: number;
}

/** Restores `snapshot` `runs` times (each after a full GC, the previous core freed); checks its aggregates. */
export function restoreTimes(config: CoreConfig, snapshot: Uint8Array, aggregates: number, runs = 3): RestoreTimes {
  const times: number[] = [];
  const cpu: number[] = [];
  let held = NaN;
  let restored: ReturnType<typeof restoreCore> | null = null;
  for (let k = 0; k < runs; k++) {
    restored = null; // the previous one freed before measuring (a frame slot would keep it otherwise)
    gc();
    const m0 = memoryInUse();
    const c0 = process.cpuUsage();
    const r0 = performance.now();
    restored = restoreCore(config, snapshot);
    times.push(performance.now() - r0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    if (restored.status().stateKeys !== aggregates) throw new Error("restore lost state");
    gc();
    held = memoryInUse() - m0;
  }
  restored = null;
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  return { medianMs: med(times), medianCpuMs: med(cpu), heldBytes: held };
}
