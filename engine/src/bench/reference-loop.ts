/**
 * The seed's Block 4 loop, brute force (counts per (window, service), one pass per policy, every
 * open key scanned on every event): the baseline the core's speed-up is measured against.
 */
import type { TelemetryEvent } from "../protocol.js";

export function referenceLoop(events: readonly TelemetryEvent[], lag: number, w: number, allowed: number): number {
  const acc = new Map<string, { win: number; count: number }>();
  const fired = new Map<string, number>();
  let dropped = 0;
  for (const e of events) {
    const wm = e.ingest_ts - lag;
    const win = Math.floor(e.ts / w);
    if ((win + 1) * w <= wm - allowed) {
      dropped++;
      continue;
    }
    const k = `${win}/${e.service}`;
    const cell = acc.get(k) ?? { win, count: 0 };
    cell.count++;
    acc.set(k, cell);
    for (const [kk, c] of acc) if ((c.win + 1) * w <= wm - allowed && !fired.has(kk)) fired.set(kk, c.count);
  }
  for (const [kk, c] of acc) if (!fired.has(kk)) fired.set(kk, c.count);
  return dropped + fired.size;
}
