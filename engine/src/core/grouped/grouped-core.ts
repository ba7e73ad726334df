/**
 * GroupedCore: one worker's core made of several cores, each restored from a group of another
 * layout's checkpoint (docs/decisions/0057-elastic-workers.md). A group owns some of the worker's
 * lanes; each lane maps to its lane in that group's core. The worker sees one StreamCore.
 *
 * Invariants:
 * - every lane of the worker belongs to exactly one group; a group's core is fed only its lanes'
 *   records and heartbeats, in the interleave's order (so each core's input contract holds), and
 *   moves to the worker's log time with every input (StreamCore.advance), so its timers and
 *   watermarks fire when one core's would;
 * - a group's core may hold keys of partitions another worker now owns (its old layout's): what it
 *   emits for them is dropped here, as that worker's group emits them; `live` decides, by the same
 *   partitioner ingest uses (`partitionOfEvent`). Keys over the caps ("(other)") pass, as they do
 *   from several workers today;
 * - its snapshot is every group's, in group order (group-container.ts); `groups()` says what each
 *   holds, and the checkpoint header carries it, so a later layout can split it again.
 *
 * A group's core keeps lanes no longer fed (its old layout's other partitions): they are retired
 * (StreamCore.retire), idle for good, so they hold no event-time watermark back.
 */
import { OTHER_ROUTE, OTHER_SERVICE } from "../windows/key-registry.js";
import { partitionOfEvent } from "../../protocol.js";
import { keyFilter } from "./key-filter.js";
import type { CoreOutput, CoreStatus, SnapshotSteps, StreamCore } from "../types.js";
import { containerSteps, encodeGroupContainer } from "./group-container.js";
import { mergeStatuses } from "./grouped-status.js";
import type { CoreGroup, GroupCore, GroupKeys } from "./core-group.js";

export type { CoreGroup, GroupCore, GroupKeys } from "./core-group.js";

export class GroupedCore implements StreamCore {
  /** Per worker lane: its group and its lane in the group's core. */
  private readonly laneGroup: Int32Array;
  private readonly laneInGroup: Int32Array;
  private readonly outs: Array<(out: CoreOutput) => CoreOutput>;
  /** The largest ingest_ts fed to any group. */
  private logTime = -Infinity;

  constructor(
    /** The worker's partitions, in lane order. */
    private readonly partitions: readonly number[],
    private readonly members: readonly GroupCore[],
    keys: GroupKeys,
  ) {
    this.laneGroup = new Int32Array(partitions.length).fill(-1);
    this.laneInGroup = new Int32Array(partitions.length);
    members.forEach((g, gi) =>
      g.partitions.forEach((p, i) => {
        const lane = partitions.indexOf(p);
        if (lane < 0 || this.laneGroup[lane] !== -1)
          throw new Error(`group ${gi}: partition ${p} not the worker's, or in two groups`);
        this.laneGroup[lane] = gi;
        this.laneInGroup[lane] = g.lanes[i] as number;
      }),
    );
    const orphan = this.laneGroup.indexOf(-1);
    if (orphan >= 0) throw new Error(`partition ${partitions[orphan]} is in no group`);
    this.outs = members.map((g) => liveOutput(new Set(g.partitions), keys));
    for (const g of members) g.core.retire?.(deadLanes(g));
  }

  event(lane: number, event: Parameters<StreamCore["event"]>[1], out: CoreOutput): void {
    const g = this.laneGroup[lane] as number;
    (this.members[g] as GroupCore).core.event(this.laneInGroup[lane] as number, event, this.outOf(g, out));
    this.advanceOthers(g, event.ingest_ts, out);
  }

  heartbeat(lane: number, ingestTs: number, out: CoreOutput): void {
    const g = this.laneGroup[lane] as number;
    (this.members[g] as GroupCore).core.heartbeat(this.laneInGroup[lane] as number, ingestTs, this.outOf(g, out));
    this.advanceOthers(g, ingestTs, out);
  }

  /** Log time is the worker's: every other group's core moves to it too, as one core's would. */
  private advanceOthers(fed: number, t: number, out: CoreOutput): void {
    if (t <= this.logTime) return;
    this.logTime = t;
    for (let g = 0; g < this.members.length; g++)
      if (g !== fed) (this.members[g] as GroupCore).core.advance?.(t, this.outOf(g, out));
  }

  private outOf(g: number, out: CoreOutput): CoreOutput {
    return (this.outs[g] as (o: CoreOutput) => CoreOutput)(out);
  }

  delayQuantiles(lane: number): Record<string, number> | undefined {
    const g = this.members[this.laneGroup[lane] as number] as GroupCore;
    return g.core.delayQuantiles?.(this.laneInGroup[lane] as number);
  }

  finish(out: CoreOutput): void {
    this.members.forEach((g, i) => g.core.finish((this.outs[i] as (o: CoreOutput) => CoreOutput)(out)));
  }

  status(): CoreStatus {
    return mergeStatuses(
      this.partitions,
      this.members.map((g) => ({ group: g, status: g.core.status() })),
    );
  }

  /** What each group holds, in group order (the checkpoint header's `groups`). */
  groups(): CoreGroup[] {
    return this.members.map(({ partitions, lanes, coreLanes }) => ({
      partitions: [...partitions],
      lanes: [...lanes],
      coreLanes,
    }));
  }

  snapshot(): Uint8Array {
    return encodeGroupContainer(this.members.map((g) => g.core.snapshot()));
  }

  /** Every group's steps in turn; the input stays held until the last is encoded. */
  snapshotSteps(): SnapshotSteps {
    return containerSteps(this.members.map((g) => g.core));
  }
}

/** The lanes of a group's core that none of its partitions feeds. */
function deadLanes(g: CoreGroup): number[] {
  const fed = new Set(g.lanes);
  return Array.from({ length: g.coreLanes }, (_, i) => i).filter((i) => !fed.has(i));
}

/** What the group emits for its live partitions' keys (and keys over the caps) passes. */
function liveOutput(live: ReadonlySet<number>, keys: GroupKeys): (out: CoreOutput) => CoreOutput {
  return keyFilter((service, route) => {
    if (service === OTHER_SERVICE || route === OTHER_ROUTE) return true;
    // A service-level key partitioned by service and route is dropped by the worker (ADR 0032).
    if (keys.partitionBy === "service+route" && route === undefined) return true;
    return live.has(partitionOfEvent({ service, route: route ?? "" }, keys.partitionCount, keys.partitionBy));
  });
}
