/**
 * A merge operator's core made of the cores of several old merge partitions, after `mergePartitions`
 * went down (docs/decisions/0057-elastic-workers.md): merge partition m′ of M restores every old
 * partition m of M₀ with m mod M = m′ (M dividing M₀), each whole, as a group. Each merged tick's
 * aggregates go to the group whose keys they are (`mergePartitionOf` at that group's count), its
 * clocks and the heartbeats to every group, so each group's core sees what it would have as its old
 * operator. Its snapshot is the groups' container (group-container.ts), the groups listed in the
 * merge operator's checkpoint; the next restore at any count starts from them.
 */
import { containerSteps, encodeGroupContainer } from "./group-container.js";
import type { CoreOutput, CoreStatus, PartialTick, SnapshotSteps, StreamCore } from "../types.js";
import { mergePartitionOf, type TelemetryEvent } from "../../protocol.js";

/** One old merge partition: its number and their count when it was written. */
export interface MergeGroup {
  partition: number;
  of: number;
}

export class MergeGroups implements StreamCore {
  constructor(private readonly members: ReadonlyArray<MergeGroup & { core: StreamCore }>) {}

  /** The groups, in snapshot order (MergeState.groups). */
  groups(): MergeGroup[] {
    return this.members.map(({ partition, of }) => ({ partition, of }));
  }

  partial(tick: PartialTick, out: CoreOutput): void {
    const parts = this.members.map((): PartialTick["deltas"][number][] => []);
    for (const d of tick.deltas) {
      const g = this.members.findIndex((m) => mergePartitionOf(d.service, m.of) === m.partition);
      if (g >= 0) (parts[g] as PartialTick["deltas"][number][]).push(d);
    }
    this.members.forEach((m, i) => m.core.partial?.({ at: tick.at, clocks: tick.clocks, deltas: parts[i] ?? [] }, out));
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    for (const m of this.members) m.core.heartbeat(partition, ingestTs, out);
  }

  /** A merge core takes no records (its input is merged ticks). */
  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    this.members[0]?.core.event(partition, e, out);
  }

  finish(out: CoreOutput): void {
    for (const m of this.members) m.core.finish(out);
  }

  /** The first group's clocks and policies (every group sees the same ticks' clocks), state summed, services' dials listed from each. */
  status(): CoreStatus {
    const all = this.members.map((m) => m.core.status());
    const first = all[0] as CoreStatus;
    const sum = (f: (s: CoreStatus) => number): number => all.reduce((n, s) => n + f(s), 0);
    return {
      ...first,
      policies: first.policies.map((p, i) => ({ ...p, services: all.flatMap((s) => s.policies[i]?.services ?? []) })),
      openWindows: sum((s) => s.openWindows),
      stateKeys: sum((s) => s.stateKeys),
      stateBytes: sum((s) => s.stateBytes),
      overflow: { services: sum((s) => s.overflow.services), routes: sum((s) => s.overflow.routes) },
    };
  }

  snapshot(): Uint8Array {
    return encodeGroupContainer(this.members.map((m) => m.core.snapshot()));
  }

  snapshotSteps(): SnapshotSteps {
    return containerSteps(this.members.map((m) => m.core));
  }
}
