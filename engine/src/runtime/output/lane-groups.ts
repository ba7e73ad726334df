/**
 * LaneGroups: the open EmitGroup of each lane, i.e. of the TM_EVENTS message each owned partition
 * is being handled at (docs/decisions/0012-batched-transport.md, "Pane batches"). The worker says
 * which item the core is handling (`at`), hands the core this object as its output, and says when
 * a message is done; `pending()` is what a checkpoint carries of the groups still open, and the
 * constructor or `restore` takes it back.
 */
import type { CoreOutput } from "../../core/types.js";
import type { LateRecord, LineBuffers, Pane } from "../../protocol.js";
import { EmitGroup, type EmitGroupState, type GroupMessage } from "./emit-group.js";

export class LaneGroups implements CoreOutput {
  /** Per lane, the group of the message being handled (undefined: nothing emitted for it yet). */
  private readonly groups: Array<EmitGroup | undefined>;
  private lane = 0;
  private seq = 0;

  constructor(
    /** Owned partition ids in lane order. */
    private readonly partitions: readonly number[],
    private readonly send: (m: GroupMessage) => void,
    private readonly clock: () => number,
    restored: readonly EmitGroupState[] = [],
    /** Where the bodies' buffers come from (BodyBuffers), else new ones. */
    private readonly buffers?: LineBuffers,
  ) {
    this.groups = new Array<EmitGroup | undefined>(partitions.length).fill(undefined);
    this.restore(restored);
  }

  /** Reopens the groups a checkpoint's `pending()` kept (before any item is handled). */
  restore(pending: readonly EmitGroupState[]): void {
    for (const g of pending) {
      const lane = this.partitions.indexOf(g.partition);
      if (lane >= 0) this.groups[lane] = new EmitGroup(g.partition, g.seq, this.send, this.clock, g, this.buffers);
    }
  }

  /** The core is about to handle an item of message `seq` of `lane`. */
  at(lane: number, seq: number): void {
    this.lane = lane;
    this.seq = seq;
  }

  pane(p: Pane): void {
    this.current().pane(p);
  }

  late(r: LateRecord): void {
    this.current().late(r);
  }

  /** Every item of message `seq` of `lane` has been handled: its group goes out. */
  done(lane: number, seq: number): void {
    const g = this.groups[lane];
    if (g?.seq !== seq) return;
    g.seal();
    this.groups[lane] = undefined;
  }

  /** The groups still open, as a checkpoint keeps them. */
  pending(): EmitGroupState[] {
    return this.groups.filter((g): g is EmitGroup => g !== undefined).map((g) => g.state());
  }

  private current(): EmitGroup {
    let g = this.groups[this.lane];
    if (g?.seq === this.seq) return g;
    // A group of an earlier message that never finished (its rest gone from the log): what it has goes out.
    g?.seal();
    g = new EmitGroup(this.partitions[this.lane] as number, this.seq, this.send, this.clock, undefined, this.buffers);
    this.groups[this.lane] = g;
    return g;
  }
}
