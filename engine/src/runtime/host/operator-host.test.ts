import { describe, expect, it } from "vitest";
import type { PublishStats } from "../output/pane-sink.js";
import type { CheckpointWaiting, HostContext, Operator, OperatorOutput } from "./operator.js";
import { OperatorHost } from "./operator-host.js";
import type { OperatorSink } from "../output/operator-sink.js";

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

/** An operator that records what the host asks of it; its final checkpoint waits for the host's flush. */
class Recorder implements Operator {
  readonly operatorId = "op-1";
  eventsTotal = 0;
  readonly calls: string[] = [];
  readonly outputs: OperatorOutput[];
  ctx!: HostContext;

  constructor(readonly partials: HeldSink | null) {
    this.outputs = [{ cause: "TM_PARTIALS", out: partials }];
  }
  onStart(): void {
    this.calls.push("start");
  }
  async onStop(): Promise<void> {
    this.calls.push("stop");
  }
  async handleFinalCheckpoint(deadline: Promise<false>): Promise<boolean> {
    this.calls.push("final");
    return Promise.race([this.ctx.flushOutput().then(() => true), deadline]);
  }
  checkpointWaiting(): CheckpointWaiting | null {
    return { n: 7, waitedMs: 3 };
  }
  onOutputOpen(): void {
    this.calls.push("open");
  }
  onConnectionLost(): void {
    this.calls.push("lost");
  }
  onConnectionRestored(): void {
    this.calls.push("restored");
  }
}

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

function hosted(partials: HeldSink | null): { host: OperatorHost<Recorder>; sink: HeldSink; op: Recorder } {
  const sink = new HeldSink("panes");
  const host = new OperatorHost(sink, { log, compressPanes: false, clock: () => 0 }, (ctx) => {
    const op = new Recorder(partials);
    op.ctx = ctx;
    return op;
  });
  return { host, sink, op: host.operator };
}

describe("OperatorHost", () => {
  it("stops the input before the final checkpoint, which waits for every output's acks, then closes them", async () => {
    const partials = new HeldSink("partials");
    const { host, sink, op } = hosted(partials);
    host.start();
    sink.publish("tm.panes.a", new Uint8Array(1), "x#0");
    partials.publish("tm.partials.0", new Uint8Array(1), "p#0");
    let closed = false;
    const closing = host.close(10_000).then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(op.calls).toEqual(["start", "stop", "final"]);
    sink.ack();
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false); // the partials are not acknowledged yet
    partials.ack();
    await closing;
    expect([sink.closed, partials.closed]).toEqual([true, true]);
  });

  it("writes no final checkpoint past the deadline, and still closes the sinks", async () => {
    const warned: string[] = [];
    const sink = new HeldSink("panes");
    const host = new OperatorHost(
      sink,
      { log: { ...log, warn: (_o, m) => warned.push(m) }, compressPanes: false },
      (ctx) => Object.assign(new Recorder(null), { ctx }),
    );
    sink.publish("tm.panes.a", new Uint8Array(1), "x#0");
    await host.close(20);
    expect(warned).toEqual(["pending panes were not acknowledged in time: no final checkpoint (the log replays them)"]);
    expect(sink.closed).toBe(true);
  });

  it("shuts the gate on a saturated output of the operator's own, and tells the operator when it opens", async () => {
    const partials = new HeldSink("partials");
    const { host, op } = hosted(partials);
    expect(op.ctx.outputSaturated()).toBe(false);
    partials.saturated = true;
    expect(op.ctx.outputSaturated()).toBe(true);
    const shut = host.gate.blocked();
    expect(shut).toBeDefined();
    expect(host.gate.hold.current()?.cause).toBe("TM_PARTIALS");
    partials.free();
    await shut;
    expect(op.calls).toEqual(["open"]);
    expect(host.gate.blocked()).toBeUndefined();
  });

  it("reports every output's window, counts panes once, and passes the connection on", () => {
    const { host, op } = hosted(new HeldSink("partials"));
    expect(host.publishStats().map((s) => s.stream)).toEqual(["TM_PANES", "TM_PARTIALS"]);
    expect(
      hosted(null)
        .host.publishStats()
        .map((s) => s.stream),
    ).toEqual(["TM_PANES"]);
    const pane = { policy: "dashboard", kind: "early" } as Parameters<HostContext["panes"]["count"]>[0];
    op.ctx.panes.count(pane);
    op.ctx.panes.count(pane);
    op.ctx.panes.count({ ...pane, kind: "final" });
    expect([...(host.panesEmitted.get("dashboard") ?? [])]).toEqual([
      ["early", 2],
      ["final", 1],
    ]);
    expect(host.checkpointWaiting()).toEqual({ n: 7, waitedMs: 3 });
    host.connectionLost();
    expect(host.disconnected).toBe(true);
    host.connectionRestored();
    expect([host.disconnected, op.calls]).toEqual([false, ["lost", "restored"]]);
  });
});
