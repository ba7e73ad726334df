/** Test support: an output that records what the core emits. */
import type { LateRecord, Pane, TelemetryEvent } from "../../protocol.js";
import { partitionOf } from "../../protocol.js";
import type { CoreOutput, StreamCore } from "../types.js";

export interface Capture extends CoreOutput {
  panes: Pane[];
  /** Records dropped for some policy (the late side output). */
  dropped: LateRecord[];
}

export function capture(): Capture {
  const panes: Pane[] = [];
  const dropped: LateRecord[] = [];
  return {
    panes,
    dropped,
    pane: (p) => void panes.push(p),
    late: (l) => void dropped.push(l),
  };
}

/** Feeds events (partitioned by service as ingest does), optionally then finish(). */
export function feed(core: StreamCore, events: readonly TelemetryEvent[], out: CoreOutput, partitions: number): void {
  for (const e of events) core.event(partitionOf(e.service, partitions), e, out);
}

export const MINUTE = 60_000;
