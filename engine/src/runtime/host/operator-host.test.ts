import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createCore } from "../../core/create-core.js";
import { defaultCoreConfig } from "../../core/default-config.js";
import type { SnapshotSteps, StreamCore } from "../../core/types.js";
import { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import type { CheckpointTrigger, CutPlan } from "../checkpoint/checkpoint-trigger.js";
import { workerStateFrame, type Restored } from "../checkpoint/state-frames.js";
import type { WorkerState } from "../checkpoint/worker-state.js";
import type { PublishStats } from "../output/pane-sink.js";
import type { OperatorSink } from "../output/operator-sink.js";
import type { InputSource } from "./input-source.js";
import type { HostContext, Operator, OperatorCheckpoint, OperatorOutput } from "./operator.js";
import { OperatorHost } from "./operator-host.js";

/** A sink whose acknowledgements the test releases: publishes are held until `ack()`. */
class HeldSink implements OperatorSink {
  readonly published: string[] = [];
  saturated = false;
  acked = 0;
  closed = false;
  onReturned: (buffer: ArrayBuffer) => void = () => undefined;
  private waiters: Array<() => void> = [];
  private rooms: Array<() => void> = [];

  constructor(private readonly name: string) {}

  get inFlight(): number {
    return this.published.length - this.acked;
  }
  publish(subject: string, _body: Uint8Array, msgId: string): void {
    this.published.push(`${subject} ${msgId}`);
  }
  stats(): PublishStats {
    const n = { messages: this.inFlight, bytes: 0 };
    return { inFlight: n, waiting: { messages: 0, bytes: 0 }, limits: { messages: 1, bytes: 1 }, resends: 0 };
  }
  room(): Promise<void> {
    return new Promise((r) => this.rooms.push(r));
  }
  flush(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  close(): void {
    this.closed = true;
  }
  /** Everything published so far is acknowledged. */
  ack(): void {
    this.acked = this.published.length;
    for (const w of this.waiters.splice(0)) w();
  }
  /** Room again (under half the window). */
  free(): void {
    this.saturated = false;
    for (const r of this.rooms.splice(0)) r();
  }
  toString(): string {
    return this.name;
  }
}

/** An input of numbered items (each its own log time) the test pushes. */
class Items implements InputSource<number[]> {
  readonly calls: string[] = [];
  /** Every call in order with the operator's own (Recorder.order). */
  constructor(private readonly order: string[]) {}
  private readonly queue: number[] = [];
  private ready: () => void = () => undefined;
  releases = 0;

  push(...items: number[]): void {
    this.queue.push(...items);
    this.ready();
  }
  start(ready: () => void): void {
    this.calls.push("start");
    this.order.push("input start");
    this.ready = ready;
  }
  pull(max: number): number[] | null {
    return this.queue.length === 0 ? null : this.queue.splice(0, max);
  }
  release(): void {
    this.releases++;
  }
  restart(): void {
    this.calls.push("restart");
  }
  async stop(): Promise<void> {
    this.calls.push("stop");
  }
}

/** A trigger the test arms: the next time the host asks, `plan` is due. */
class Armed implements CheckpointTrigger {
  plan: CutPlan | null = null;
  asked = 0;
  constructor(private readonly order: string[]) {}
  restored(logTime: number | null): void {
    this.order.push(`trigger restored at ${logTime}`);
  }
  due(): CutPlan | null {
    this.asked++;
    const p = this.plan;
    this.plan = null;
    return p;
  }
  cut(): void {}
  encoded(): void {}
}

/** An operator that records the batches and cuts the host hands it; its snapshot ends once `captured` is set. */
class Recorder implements Operator<number[], WorkerState> {
  readonly operatorId = "op-1";
  eventsTotal = 0;
  readonly batches: number[][] = [];
  readonly cuts: string[] = [];
  /** Restores, the input's start and batches, in the order they came. */
  readonly order: string[] = [];
  readonly input = new Items(this.order);
  readonly trigger = new Armed(this.order);
  readonly stateFrame = workerStateFrame;
  /** Its checkpointed state: what it was restored to (it changes it with no batch). */
  state: WorkerState = { offsets: [] };
  restoredLogTime: number | null = null;
  restoredCore: StreamCore | null = null;
  readonly outputs: OperatorOutput[];
  /** Set by the test: the snapshot's steps run across turns until then. */
  capture = true;
  ctx!: HostContext;

  constructor(readonly partials: HeldSink | null) {
    this.outputs = [{ cause: "TM_PARTIALS", out: partials }];
  }
  processBatch(batch: number[]): number {
    this.order.push(`batch ${batch.join(",")}`);
    this.batches.push(batch);
    this.eventsTotal += batch.length;
    return batch.length;
  }
  logTime(): number | null {
    const last = this.batches.at(-1);
    return last === undefined ? this.restoredLogTime : (last.at(-1) as number);
  }
  restore({ state, core, logTime }: Restored<WorkerState>): void {
    this.order.push(`restore at ${logTime}`);
    this.restoredCore = core;
    this.state = state;
    this.restoredLogTime = logTime;
  }
  handleCheckpoint(plan: CutPlan): OperatorCheckpoint<WorkerState> {
    this.cuts.push(plan.final ? "final" : `cut ${plan.barrier ?? "own"} at ${this.logTime()}`);
    const captured = (): boolean => this.capture;
    const steps = (function* (): SnapshotSteps {
      while (!captured()) yield;
      return Uint8Array.of(1, 2, 3);
    })();
    return { state: this.state, steps };
  }
}

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function store(): Promise<CheckpointStore> {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-host-"));
  dirs.push(dir);
  const s = new CheckpointStore(dir);
  await s.open();
  return s;
}

function files(s: CheckpointStore): string[] {
  return readdirSync(s.dir).filter((f) => f.endsWith(".tmck"));
}

async function hosted(
  partials: HeldSink | null,
  warn: (o: object, m: string) => void = () => undefined,
  restored: Restored<WorkerState> | null = null,
): Promise<{ host: OperatorHost<Recorder>; sink: HeldSink; op: Recorder; cps: CheckpointStore }> {
  const sink = new HeldSink("panes");
  const cps = await store();
  const owner = { partitionCount: 4, partitions: [0, 1] };
  const opts = { log: { ...log, warn }, compressPanes: false, clock: () => 0, store: cps, owner, restored };
  const host = new OperatorHost(sink, opts, (ctx) => Object.assign(new Recorder(partials), { ctx }));
  return { host, sink, op: host.operator, cps };
}

/** A lane resumed after message `lastSeq`, at log time `logTime`. */
const offset = (lastSeq: number, logTime: number): WorkerState["offsets"][number] => ({
  lastSeq,
  partialSeq: 0,
  partialCount: 0,
  logTime,
});

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("OperatorHost", () => {
  it("stops the input before the final checkpoint, which waits for every output's acks, then closes them", async () => {
    const partials = new HeldSink("partials");
    const { host, sink, op, cps } = await hosted(partials);
    host.start();
    sink.publish("tm.panes.a", new Uint8Array(1), "x#0");
    partials.publish("tm.partials.0", new Uint8Array(1), "p#0");
    let closed = false;
    const closing = host.close(10_000).then(() => (closed = true));
    await vi.waitFor(() => expect(op.cuts).toEqual(["final"]));
    expect(op.input.calls).toEqual(["start", "stop"]);
    sink.ack();
    await turn();
    expect([closed, files(cps)]).toEqual([false, []]); // the partials are not acknowledged yet
    partials.ack();
    await closing;
    expect(files(cps)).toHaveLength(1);
    expect([sink.closed, partials.closed]).toEqual([true, true]);
  });

  it("writes no final checkpoint past the deadline, and still closes the sinks", async () => {
    const warned: string[] = [];
    const { host, sink, cps } = await hosted(null, (_o, m) => warned.push(m));
    sink.publish("tm.panes.a", new Uint8Array(1), "x#0");
    await host.close(20);
    sink.ack(); // too late: nothing is written after the deadline
    await turn();
    expect(warned).toEqual(["pending panes were not acknowledged in time: no final checkpoint (the log replays them)"]);
    expect([sink.closed, files(cps)]).toEqual([true, []]);
  });

  it("pulls bounded batches, asks the trigger after each slice and lets the held consumers read on", async () => {
    const { host, op } = await hosted(null);
    host.start();
    op.input.push(...Array.from({ length: 300 }, (_, i) => i));
    await vi.waitFor(() => expect(op.eventsTotal).toBe(300));
    expect(op.batches.map((b) => b.length)).toEqual([128, 128, 44]);
    expect(op.batches.flat()).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(op.trigger.asked).toBeGreaterThanOrEqual(1);
    expect(op.input.releases).toBe(op.trigger.asked);
    await host.close(1_000);
  });

  it("pulls nothing while an output is saturated, and again once it has room", async () => {
    const partials = new HeldSink("partials");
    const { host, op } = await hosted(partials);
    host.start();
    partials.saturated = true;
    expect(op.ctx.outputSaturated()).toBe(true);
    op.input.push(1, 2, 3);
    await turn();
    await turn();
    expect(op.eventsTotal).toBe(0);
    expect(host.gate.hold.current()?.cause).toBe("TM_PARTIALS");
    partials.free();
    await vi.waitFor(() => expect(op.eventsTotal).toBe(3));
    expect(host.gate.blocked()).toBeUndefined();
    await host.close(1_000);
  });

  it("cuts between batches: holds the input until the state is captured, writes only after the acks, reports", async () => {
    const { host, sink, op, cps } = await hosted(null);
    const events: string[] = [];
    host.checkpoints.onCheckpoint = (e) => events.push(`written at ${e.logTime}`);
    const plan: CutPlan = {
      barrier: 7,
      afterCut: () => events.push("after cut"),
      captured: () => events.push("captured"),
      durable: (file) => events.push(`durable ${file === join(cps.dir, files(cps)[0] ?? "")}`),
    };
    op.capture = false;
    op.trigger.plan = plan;
    host.start();
    sink.publish("tm.panes.a", new Uint8Array(1), "x#0"); // published before the cut
    op.input.push(10, 11);
    await vi.waitFor(() => expect(op.cuts).toEqual(["cut 7 at 11"]));
    expect(host.checkpoints.holding).toBe(true);
    expect(host.checkpointWaiting()?.n).toBe(7);
    op.input.push(12);
    for (let i = 0; i < 5; i++) await turn();
    expect([op.eventsTotal, events]).toEqual([2, ["after cut"]]); // held: 12 not pulled
    op.capture = true;
    await vi.waitFor(() => expect(op.eventsTotal).toBe(3));
    expect(events).toEqual(["after cut", "captured"]);
    for (let i = 0; i < 5; i++) await turn();
    expect(files(cps)).toEqual([]); // the pane before the cut is not acknowledged yet
    sink.ack();
    await vi.waitFor(() => expect(events).toEqual(["after cut", "captured", "written at 11", "durable true"]));
    expect(host.checkpointWaiting()).toBeNull();
    expect(host.checkpoints.lastCheckpointWall).toBe(0);
    await host.close(1_000);
  });

  it("writes a checkpoint of the operator's own when its trigger says one is due", async () => {
    const { host, op, cps } = await hosted(null);
    const written: Array<number | null> = [];
    host.checkpoints.onCheckpoint = (e) => written.push(e.logTime);
    op.trigger.plan = {};
    host.start();
    op.input.push(5);
    await vi.waitFor(() => expect(written).toEqual([5]));
    expect([op.cuts, files(cps).length, host.checkpointWaiting()]).toEqual([["cut own at 5"], 1, null]);
    await host.close(1_000);
  });

  it("restores the operator before anything runs it: its state and its trigger, then the input and the first batch", async () => {
    const restored = {
      state: { offsets: [offset(7, 42), offset(3, 40)] },
      core: createCore(defaultCoreConfig()),
      logTime: 42,
    };
    const { host, op } = await hosted(null, undefined, restored);
    expect(op.order).toEqual(["restore at 42", "trigger restored at 42"]); // before the host is handed back
    expect(op.restoredCore).toBe(restored.core);
    host.start();
    op.input.push(43, 44);
    await vi.waitFor(() => expect(op.eventsTotal).toBe(2));
    expect(op.order).toEqual(["restore at 42", "trigger restored at 42", "input start", "batch 43,44"]);
    await host.close(1_000);
  });

  it("restores nothing on a fresh start", async () => {
    const { host, op } = await hosted(null);
    host.start();
    op.input.push(1);
    await vi.waitFor(() => expect(op.eventsTotal).toBe(1));
    expect([op.order, op.state]).toEqual([["input start", "batch 1"], { offsets: [] }]);
    await host.close(1_000);
  });

  it("writes, as a restored operator's first checkpoint with no input, the state and log time it restored", async () => {
    const state: WorkerState = {
      offsets: [offset(9, 1_700_000_000_500), { lastSeq: 4, partialSeq: 5, partialCount: 2, logTime: null }],
      pending: [
        { partition: 0, seq: 10, subjects: [{ subject: "tm.panes.a", chunk: 0, lines: ['{"x":1}'], units: 8 }] },
      ],
      partials: { from: 1_700_000_000_000, maxTs: [1, null], lastEventAt: [2, null], events: [3, 0], deltas: [] },
    };
    const restored = {
      state: structuredClone(state),
      core: createCore(defaultCoreConfig()),
      logTime: 1_700_000_000_500,
    };
    const { host, cps } = await hosted(null, undefined, restored);
    host.start();
    await host.close(1_000);
    const { checkpoint, file } = await cps.load(undefined);
    const header = checkpoint?.header;
    expect(header && workerStateFrame.read(header, file)).toEqual(state);
    expect([header?.logTime, header?.final]).toEqual([1_700_000_000_500, true]);
  });

  it("reports every output's window, counts panes once, and recreates the input's consumers on a reconnect", async () => {
    const { host, op } = await hosted(new HeldSink("partials"));
    expect(host.publishStats().map((s) => s.stream)).toEqual(["TM_PANES", "TM_PARTIALS"]);
    expect((await hosted(null)).host.publishStats().map((s) => s.stream)).toEqual(["TM_PANES"]);
    const pane = { policy: "dashboard", kind: "early" } as Parameters<HostContext["panes"]["count"]>[0];
    op.ctx.panes.count(pane);
    op.ctx.panes.count(pane);
    op.ctx.panes.count({ ...pane, kind: "final" });
    expect([...(host.panesEmitted.get("dashboard") ?? [])]).toEqual([
      ["early", 2],
      ["final", 1],
    ]);
    expect(host.checkpointWaiting()).toBeNull();
    host.connectionLost();
    expect(host.disconnected).toBe(true);
    host.connectionRestored();
    expect([host.disconnected, op.input.calls]).toEqual([false, ["restart"]]);
  });
});
