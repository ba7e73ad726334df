/**
 * The cut of a checkpoint, as the OperatorHost runs it for every operator
 * (docs/decisions/0045-operator-host.md, decision 5; docs/decisions/0016-checkpoints-without-pause.md):
 * between two batches, with none being written, the operator's trigger says whether one is due
 * (checkpoint/checkpoint-trigger.ts); an operator may also hand the host a cut itself (a merge
 * operator's alignment complete). The sequence is the same for each: the input is held, the
 * operator's state is captured (`handleCheckpoint`: its part of the header and the core's snapshot
 * steps), the plan's `afterCut` runs (a worker's barrier), the snapshot is encoded across turns and
 * the input released once the state is captured (`captured`), and the file is written once
 * everything published before the cut is acknowledged — never durable ahead of its panes — then
 * reported.
 */
import { checkpointHeader, persistCheckpoint, type CheckpointOwner } from "../checkpoint/checkpoint-frame.js";
import type { CheckpointEvent } from "../checkpoint/checkpoint-event.js";
import type { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { CheckpointTrigger, CutPlan } from "../checkpoint/checkpoint-trigger.js";
import { encodeCut, type Cut, type Taken } from "../checkpoint/encode-cut.js";
import type { OperatorLog } from "../operator-log.js";
import type { CheckpointWaiting, Operator } from "./operator.js";

export interface HostCheckpointsDeps {
  owner: Omit<CheckpointOwner, "operatorId">;
  store: CheckpointStore;
  log: OperatorLog;
  clock: () => number;
  flushOutput(): Promise<void>;
  /** The input may flow again: the host's loop runs. */
  wake(): void;
}

export class HostCheckpoints {
  /** Wall clock when the last durable checkpoint's snapshot was taken. */
  lastCheckpointWall: number | null = null;
  onCheckpoint: (e: CheckpointEvent) => void = () => undefined;
  /** From a cut until its state is captured: the host pulls no input meanwhile. */
  holding = false;
  private readonly writes = new Set<Promise<void>>();
  /** The aligned checkpoint cut and not yet durable. */
  private waitingFor: { n: number; since: number } | null = null;

  constructor(
    private readonly operator: Operator,
    private readonly trigger: CheckpointTrigger,
    private readonly deps: HostCheckpointsDeps,
  ) {}

  get writing(): boolean {
    return this.writes.size > 0;
  }

  waiting(): CheckpointWaiting | null {
    const w = this.waitingFor;
    return w === null ? null : { n: w.n, waitedMs: this.deps.clock() - w.since };
  }

  /** Between two batches: a cut when the trigger says one is due and none is being written. */
  maybe(): void {
    if (this.writing) return;
    const t = this.operator.logTime();
    if (t === null) return;
    const plan = this.trigger.due(t);
    if (plan !== null) this.start(plan);
  }

  /** A cut now, whatever is being written (an operator's alignment completed). */
  start(plan: CutPlan): void {
    const cut = this.cut(plan);
    const n = plan.barrier;
    if (n !== undefined) this.waitingFor = { n, since: cut.header.wallTime };
    const write: Promise<void> = this.write(cut, plan)
      .then(async (taken) => {
        const file = await this.persist(taken);
        plan.durable?.(file, taken, cut.header.wallTime);
      })
      .catch((err: Error) =>
        this.deps.log.error(
          { ...(n !== undefined ? { n } : {}), err: err.message },
          plan.failure ?? "checkpoint failed; the next one will retry",
        ),
      )
      .finally(() => {
        this.writes.delete(write);
        if (this.waitingFor?.n === n) this.waitingFor = null;
        // A checkpoint asked for meanwhile is cut now, not at the next input, which may never come.
        this.deps.wake();
      });
    this.writes.add(write);
  }

  /**
   * The final checkpoint of a stop: once those being written are done, cut, encode, and write it
   * once its acks are in — all before `deadline`. False when the deadline came first (no file).
   */
  async final(deadline: Promise<false>): Promise<boolean> {
    const writes = Promise.all(this.writes).then(() => true);
    if (this.writing && !(await Promise.race([writes, deadline]))) return false;
    const taken = await Promise.race([this.write(this.cut({ final: true }), {}), deadline]);
    if (taken === false) return false;
    await this.persist(taken);
    return true;
  }

  /** Holds the input and takes the operator's state and snapshot steps, then the plan's afterCut. */
  private cut(plan: CutPlan): Cut {
    const t0 = performance.now();
    const logTime = this.operator.logTime();
    const { state, steps } = this.operator.handleCheckpoint(plan);
    const owner = { ...this.deps.owner, operatorId: this.operator.operatorId };
    const fields = this.operator.stateFrame.write(state);
    const header = checkpointHeader(owner, logTime, this.deps.clock(), fields, plan.barrier, plan.final === true);
    this.trigger.cut(logTime, header.wallTime);
    this.holding = true;
    plan.afterCut?.();
    return { header, steps, t0 };
  }

  /** Encodes the cut (the input released once its state is captured) while its acks are awaited. */
  private async write(cut: Cut, plan: CutPlan): Promise<Taken> {
    // Released in a microtask: never inside a turn of the snapshot's encoding (whose steps may be
    // suspended on copies), and before any new input, which comes in a later task.
    const encoding = encodeCut(cut, () =>
      queueMicrotask(() => {
        this.holding = false;
        plan.captured?.();
        this.deps.wake();
      }),
    );
    const encoded = encoding.then((taken) => (this.trigger.encoded(taken), taken));
    const [taken] = await Promise.all([encoded, this.deps.flushOutput()]);
    return taken;
  }

  private persist(taken: Taken): Promise<string> {
    return persistCheckpoint(this.deps.store, taken.cp, taken, (e) => {
      this.lastCheckpointWall = taken.cp.header.wallTime;
      this.onCheckpoint(e);
    });
  }
}
