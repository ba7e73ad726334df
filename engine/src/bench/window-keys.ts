/**
 * Open (window, key) pairs of a core: a key in a 10 s and a 60 s window counts twice, whether the
 * two windows share the slice's aggregate (docs/decisions/0022-sliced-windows.md) or not — what
 * "memory per open (window, key)" in engine/BENCHMARKS.md divides by. status().stateKeys counts
 * the aggregates instead.
 */
import type { EventTimeCore } from "../core/stream-core.js";

export function openWindowKeys(core: EventTimeCore): number {
  let n = 0;
  for (const c of core.state.windowConfigs)
    for (const w of c.windows.values()) {
      const keys = new Set<string>();
      for (const s of w.slices)
        for (const [service, node] of s.services) {
          keys.add(service);
          for (const route of node.routes?.keys() ?? []) keys.add(`${service}\u0000${route}`);
        }
      n += keys.size;
    }
  return n;
}
