/**
 * Which per-service dials a `tm.status` message carries (docs/operations.md, "Engine status").
 * The core keeps a dial for every named service (up to serviceCap, 2000 by default), and a status
 * with all of them — per policy and window size — outgrows NATS' 1 MiB max_payload long before the
 * cap. So each (policy, window size) lists at most STATUS_MAX_SERVICES services: the flagged ones
 * first (what a user must see), then the busiest by events counted in the lateness test, then by
 * name (deterministic); the rest are counted in `servicesOmitted`.
 */
import type { ServiceDial } from "../../protocol.js";

export const STATUS_MAX_SERVICES = 100;

function events(d: ServiceDial): number {
  return d.lateness.onTimeEvents + d.lateness.lateEvents;
}

function before(a: ServiceDial, b: ServiceDial): number {
  if (a.lateness.flagged !== b.lateness.flagged) return a.lateness.flagged ? -1 : 1;
  const busier = events(b) - events(a);
  if (busier !== 0) return busier;
  return a.service < b.service ? -1 : a.service > b.service ? 1 : 0;
}

/** At most `max` dials per window size, in the order above; how many were left out. */
export function boundServices(
  all: readonly ServiceDial[],
  max = STATUS_MAX_SERVICES,
): { services: ServiceDial[]; omitted: number } {
  const bySize = new Map<number, ServiceDial[]>();
  for (const d of all) {
    const list = bySize.get(d.windowMs);
    if (list) list.push(d);
    else bySize.set(d.windowMs, [d]);
  }
  const services: ServiceDial[] = [];
  let omitted = 0;
  for (const list of bySize.values()) {
    if (list.length <= max) {
      services.push(...list);
      continue;
    }
    const kept = [...list].sort(before).slice(0, max);
    omitted += list.length - max;
    // Listed in the order the core gave (sorted by service), so small statuses are unchanged.
    const keep = new Set(kept);
    services.push(...list.filter((d) => keep.has(d)));
  }
  return { services, omitted };
}
