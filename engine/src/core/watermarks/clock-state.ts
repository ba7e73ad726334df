/**
 * The input side of an operator's state (docs/semantics.md, "Input contract" and "Watermarks"):
 * log time, every partition's clock and every policy's progress. The window core and the session
 * operator each hold one; snapshots write it with snapshot-parts.ts.
 */
import { policyStates, type PolicyState } from "../panes/policy-state.js";
import type { CoreConfig, PolicyConfig } from "../types.js";
import { newPartitionClock, type PartitionClock } from "./watermark.js";

export interface ClockState {
  /** Largest ingest_ts fed (records and heartbeats); −Infinity before the first input. */
  logTime: number;
  /** Records fed. */
  eventsTotal: number;
  readonly partitions: PartitionClock[];
  readonly policies: PolicyState[];
}

export function newClockState(config: CoreConfig, policies: readonly PolicyConfig[] = config.policies): ClockState {
  return {
    logTime: -Infinity,
    eventsTotal: 0,
    partitions: Array.from({ length: config.partitions }, newPartitionClock),
    policies: policyStates(config, policies),
  };
}

/** The policy's W now: tracked on event time, or log time − lag. */
export function watermarkOf(clock: ClockState, p: PolicyState): number {
  return p.eventTime ? p.eventTimeWatermark : clock.logTime - p.lagMs;
}

/** Partitions never fed again (StreamCore.retire): idle at once, out of the event-time minimum for good. */
export function retirePartitions(clock: ClockState, partitions: readonly number[]): void {
  for (const i of partitions) {
    const p = clock.partitions[i];
    if (p !== undefined) p.lastEventAt = -Infinity;
  }
}
