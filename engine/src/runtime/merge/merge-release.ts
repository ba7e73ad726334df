/**
 * MergeRelease: the merge operator's output side (docs/decisions/0029-two-stage-dataflow.md,
 * "Runtime"): the ticks the TickAligner releases go through the merge core, every partition's log
 * time moves to the aligner's bound, and what the core emits goes out as one EmitGroup keyed
 * (group, seq) — a TM_PARTIALS message's place, or the timer's own group and the wall clock, so no
 * message id of a message's group can be reused. It counts what it merged (records; panes and the
 * pipeline lag through both stages in the host's counters) and each tick's alignment time.
 */
import { epochPane } from "../output/epoch-output.js";
import type { TickAligner } from "../../core/partials/tick-aligner.js";
import type { CoreOutput, StreamCore } from "../../core/types.js";
import { EmitGroup } from "../output/emit-group.js";
import type { HostContext } from "../host/operator.js";

export class MergeRelease {
  /** Records merged (the events the partials stand for). */
  eventsTotal = 0;
  /** Each released tick's alignment time: wall ms from its first batch's arrival to its release. */
  onTickAligned: (ms: number) => void = () => undefined;
  /** Wall clock at each held tick's first batch (deleted at release). */
  private readonly firstSeen = new Map<number, number>();

  constructor(
    private readonly aligner: TickAligner,
    /** The merge core, read at each release (a restore replaces the operator's). */
    private readonly core: () => StreamCore,
    private readonly partitionCount: number,
    /** Where the panes go (send, buffers) and what counts them (panes, pipelineLag). */
    private readonly host: HostContext,
    /** The merge core's log time: the end of the ticks released (null: none yet). */
    public logTime: number | null,
  ) {}

  /** A batch of the tick starting at `from` was accepted at `now` (its alignment time starts). */
  accepted(from: number, now: number): void {
    if (!this.firstSeen.has(from)) this.firstSeen.set(from, now);
  }

  /** The ticks the aligner releases now, through the core, their panes as one EmitGroup (group, seq). */
  release(now: number, groupId: number, seq: number, part = 0): void {
    const { ticks, logTime } = this.aligner.release(now);
    if (logTime === null) return;
    const host = this.host;
    const group = new EmitGroup(groupId, seq, host.send, host.clock, undefined, host.buffers, part);
    const out: CoreOutput = {
      pane: (p) => {
        host.panes.count(p);
        group.pane(epochPane(p, host.epoch));
      },
      late: (r) => group.late(r),
    };
    let records = 0;
    const core = this.core();
    for (const t of ticks) {
      this.aligned(t.at, now);
      for (const c of t.clocks) records += c.events;
      core.partial?.(t, out);
    }
    for (let p = 0; p < this.partitionCount; p++) core.heartbeat(p, logTime, out);
    this.logTime = logTime;
    group.seal();
    this.eventsTotal += records;
    if (records > 0) host.pipelineLag.observe(now, logTime, records);
  }

  private aligned(at: number, now: number): void {
    const since = this.firstSeen.get(at);
    if (since === undefined) return;
    this.firstSeen.delete(at);
    this.onTickAligned(now - since);
  }
}
