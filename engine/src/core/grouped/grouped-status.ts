/**
 * The status of a grouped core (grouped-core.ts): its groups' statuses as one worker's, in the
 * worker's lane numbering. Counters add; log time and each policy's watermark are the lowest
 * group's (every group has seen that far, as one core would have); the pooled bias and emit delay are the
 * group with the most records' (pooled means cannot be added; per-service dials are listed from
 * every group, the first group's first). Lanes of a group's core that the worker does not own
 * are left out. Fields a core adds to its status (sessions) are the main group's.
 */
import type { CoreStatus, PolicyStatus } from "../types.js";
import type { CoreGroup } from "./core-group.js";

export interface GroupStatus {
  group: CoreGroup;
  status: CoreStatus;
}

export function mergeStatuses(partitions: readonly number[], groups: readonly GroupStatus[]): CoreStatus {
  const main = groups.reduce((a, b) => (b.status.eventsTotal > a.status.eventsTotal ? b : a));
  const lanes = partitions.map((p) => {
    const g = groups.find((x) => x.group.partitions.includes(p)) as GroupStatus;
    const inGroup = g.group.lanes[g.group.partitions.indexOf(p)] as number;
    return { g, inGroup };
  });
  const sum = (f: (s: CoreStatus) => number): number => groups.reduce((n, g) => n + f(g.status), 0);
  return {
    // Fields beyond CoreStatus (a session operator's) are the main group's.
    ...main.status,
    logTime: minOrNull(groups.map((g) => g.status.logTime)),
    partitions: lanes.map(({ g, inGroup }, lane) => ({
      ...(g.status.partitions[inGroup] as CoreStatus["partitions"][0]),
      partition: lane,
    })),
    policies: main.status.policies.map((p, i) =>
      mergePolicy(
        p,
        groups.map((g) => g.status.policies[i] as PolicyStatus),
      ),
    ),
    openWindows: sum((s) => s.openWindows),
    stateKeys: sum((s) => s.stateKeys),
    stateBytes: sum((s) => s.stateBytes),
    overflow: { services: sum((s) => s.overflow.services), routes: sum((s) => s.overflow.routes) },
    eventsTotal: sum((s) => s.eventsTotal),
    heldBackBy: heldBack(lanes, slowest(groups)),
  };
}

function mergePolicy(main: PolicyStatus, all: readonly PolicyStatus[]): PolicyStatus {
  const sum = (f: (p: PolicyStatus) => number): number => all.reduce((n, p) => n + f(p), 0);
  const seen = new Set<string>();
  const services = [main, ...all]
    .flatMap((p) => p.services)
    .filter((s) => {
      const id = `${s.windowMs}|${s.service}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  return {
    ...main,
    watermark: minOrNull(all.map((p) => p.watermark)),
    lateAcceptedWindowEvents: sum((p) => p.lateAcceptedWindowEvents),
    lateAcceptedEvents: sum((p) => p.lateAcceptedEvents),
    droppedWindowEvents: sum((p) => p.droppedWindowEvents),
    droppedEvents: sum((p) => p.droppedEvents),
    services,
  };
}

/** The group whose first policy's watermark is lowest (its held-back lane holds the worker back). */
function slowest(groups: readonly GroupStatus[]): GroupStatus {
  const w = (g: GroupStatus): number => g.status.policies[0]?.watermark ?? -Infinity;
  return groups.reduce((a, b) => (w(b) < w(a) ? b : a));
}

function heldBack(lanes: readonly { g: GroupStatus; inGroup: number }[], g: GroupStatus): number | null {
  const held = g.status.heldBackBy;
  if (held === null) return null;
  const lane = lanes.findIndex((l) => l.g === g && l.inGroup === held);
  return lane < 0 ? null : lane;
}

function minOrNull(xs: readonly (number | null)[]): number | null {
  const v = xs.filter((x): x is number => x !== null);
  return v.length === 0 ? null : Math.min(...v);
}
