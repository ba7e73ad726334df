/**
 * A core holding many open (window, key) states: `services` services × 100 routes, one event each,
 * all in the first slice of every window — the checkpoint benchmark's state and the event-loop
 * test's (engine/src/runtime/snapshot-turns.test.ts). Deterministic.
 */
import { createCore } from "../core/create-core.js";
import type { CoreConfig, StreamCore } from "../core/types.js";
import { partitionOf, type TelemetryEvent } from "../protocol.js";

export function openStates(config: CoreConfig, services: number): StreamCore {
  const core = createCore(config);
  const out = { pane: () => undefined, late: () => undefined };
  for (const e of openStateEvents(services)) core.event(partitionOf(e.service, config.partitions), e, out);
  return core;
}

/** Log time of every open-states event. */
export const OPEN_STATES_AT = 1_700_000_000_000 + 5000;

/** The events: one per (service, route), all in the first slice of every window. */
export function* openStateEvents(services: number): Generator<TelemetryEvent> {
  const t = OPEN_STATES_AT - 5000;
  let i = 0;
  for (let s = 0; s < services; s++)
    for (let r = 0; r < 100; r++, i++)
      yield {
        ts: t + (i % 5000),
        ingest_ts: OPEN_STATES_AT,
        service: `svc-${s}`,
        route: `/route/${r}`,
        status: i % 50 ? 200 : 500,
        latency_ms: 5 + (i % 300),
        user: `u${i % 5000}`,
      };
}
