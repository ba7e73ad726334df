/**
 * A merge operator's checkpointed state is one MergeState, symmetric (docs/decisions/0045-operator-host.md,
 * decision 6): an operator built bare and given, through `restore`, the state another one's
 * `handleCheckpoint` took — ticks held back for a slower partition included — takes that very
 * state at its own first cut, through the checkpoint header and back. The other operator is the
 * oracle: it merged the input; the restored one saw none.
 */
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { coreAggregates, createCore, partialSliceLengths, restoreCore } from "../../core/create-core.js";
import { allSteps } from "../../core/snapshot/snapshot-steps.js";
import { PartialAccumulator } from "../../core/partials/partial-accumulator.js";
import {
  encodePartialBatch,
  encodePartialRun,
  PARTIAL_TICK_MS,
  readPaneRecords,
  type PartialBatch,
  type TelemetryEvent,
} from "../../protocol.js";
import { decodeCheckpoint, encodeCheckpoint } from "../checkpoint/checkpoint-codec.js";
import { checkpointHeader } from "../checkpoint/checkpoint-frame.js";
import { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import { mergeStateFrame } from "../checkpoint/state-frames.js";
import { parseMergeConfig, type MergeConfig } from "../config/merge-config.js";
import { OperatorHost } from "../host/operator-host.js";
import { quietSink } from "../host/__fixtures__/quiet-sink.js";
import { MergeOperator } from "./merge-operator.js";

const T0 = 1_700_000_000_000;

/** A merge operator on a host that is never started: its messages are handed in by hand; `seen` is shown its publishes. */
function operator(
  config: MergeConfig,
  clock: () => number,
  seen?: (subject: string, body: Uint8Array, msgId: string) => void,
): MergeOperator {
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const opts = { log, compressPanes: false, store: new CheckpointStore("unused"), owner: config, clock };
  const js = {} as JetStreamClient;
  return new OperatorHost(
    quietSink(seen),
    opts,
    (ctx) => new MergeOperator(config, { create: createCore, restore: restoreCore }, js, ctx),
  ).operator;
}

/** Stage 1 of one worker owning `partition`: its batches over `n` events, one every 37 ms of ingest time. */
function stageOne(config: MergeConfig, partition: number, n: number): PartialBatch[] {
  const out: PartialBatch[] = [];
  const acc = new PartialAccumulator({
    worker: `w${partition}`,
    partitions: [partition],
    tickMs: PARTIAL_TICK_MS,
    sliceMs: partialSliceLengths(config.core),
    kind: coreAggregates(config.core),
    emit: (b) => out.push(b),
  });
  for (let i = 0; i < n; i++) {
    const t = T0 + i * 37;
    const e: TelemetryEvent = {
      ts: t - (i % 5) * 90,
      ingest_ts: t,
      service: `svc${i % 3}`,
      route: "/",
      status: i % 13 === 0 ? 500 : 200,
      latency_ms: 3 + (i % 50),
      user: `u${i % 23}`,
    };
    acc.event(0, e);
  }
  return out;
}

function message(seq: number, b: PartialBatch): JsMsg {
  return body(seq, encodePartialBatch(b));
}

function body(seq: number, data: Uint8Array): JsMsg {
  return { seq, data, headers: undefined, string: () => "" } as unknown as JsMsg;
}

describe("MergeOperator checkpointed state", () => {
  it("restores exactly what its handleCheckpoint took: its place in TM_PARTIALS, the ticks it holds back, the core", () => {
    const config = parseMergeConfig({ file: { partitionCount: 2 } });
    const now = (): number => T0 + 1_000;
    const a = operator(config, now);
    // Partition 1 reports a third as far as partition 0: the ticks past it are held back.
    const batches = [...stageOne(config, 0, 300), ...stageOne(config, 1, 100)];
    batches.forEach((b, i) => a.processBatch(message(i + 1, b)));
    expect(a.batches.accepted).toBe(batches.length);
    expect(a.aligner.waiting).toBeGreaterThan(0);
    const cut = a.handleCheckpoint({});
    const taken = cut.state;
    const snapshot = allSteps(cut.steps);
    expect(taken.seq).toBe(batches.length);

    const owner = { operatorId: config.worker, partitionCount: 2, partitions: config.partitions };
    const header = checkpointHeader(owner, a.logTime(), 0, mergeStateFrame.write(taken), undefined, false);
    const file = decodeCheckpoint(encodeCheckpoint({ header, snapshot: new Uint8Array(0) }), "f");
    const read = mergeStateFrame.read(file.header, "f");
    expect(read).toEqual(taken);

    const b = operator(config, now);
    b.restore({ state: read, core: restoreCore(config.core, snapshot), logTime: file.header.logTime });
    expect(b.logTime()).toBe(a.logTime());
    const again = b.handleCheckpoint({});
    expect(again.state).toEqual(taken);
    expect(allSteps(again.steps)).toEqual(snapshot);
  });

  it("refuses, naming the file and what to do, a checkpoint an engine worker wrote", () => {
    const owner = { operatorId: "engine-0-1", partitionCount: 2, partitions: [0, 1] };
    const header = checkpointHeader(owner, T0, 0, { offsets: [] }, undefined, false);
    expect(() => mergeStateFrame.read(header, "data/checkpoints/00000001.tmck")).toThrow(
      /checkpoint data\/checkpoints\/00000001.tmck was written by an engine worker, not a merge operator: give the merge operator its own id \(--worker\) or --data directory/,
    );
  });

  it("takes the batches of a run as it takes them one message each, a replay cut into other runs included", () => {
    const config = parseMergeConfig({ file: { partitionCount: 2 } });
    const now = (): number => T0 + 1_000;
    const batches = [...stageOne(config, 0, 300), ...stageOne(config, 1, 100)];
    const stored = [new Map<string, Uint8Array>(), new Map<string, Uint8Array>()];
    // What TM_PANES stores of each: the first body under each message id.
    const keep = (i: number) => (_s: string, body: Uint8Array, id: string) =>
      void (stored[i] as Map<string, Uint8Array>).set(
        id,
        (stored[i] as Map<string, Uint8Array>).get(id) ?? body.slice(),
      );
    const one = operator(config, now, keep(0));
    batches.forEach((b, i) => one.processBatch(message(i + 1, b)));
    const runs = operator(config, now, keep(1));
    const run = (from: number, to: number): Uint8Array =>
      encodePartialRun(batches.slice(from, to).map(encodePartialBatch));
    const cuts = [0, 1, 8, 20, 21, 70, 130, batches.length];
    let seq = 0;
    for (let i = 1; i < cuts.length; i++) runs.processBatch(body(++seq, run(cuts[i - 1] as number, cuts[i] as number)));
    // A restarted worker's replay, cut otherwise: its batches are duplicates, the run is not refused.
    runs.processBatch(body(++seq, run(5, 15)));
    expect(runs.batches.accepted).toBe(batches.length);
    expect(runs.batches.duplicate).toBe(10);
    expect(runs.batches.malformed).toBe(0);
    const [a, b] = [one.handleCheckpoint({}), runs.handleCheckpoint({})];
    expect(b.state.seq).toBe(seq);
    expect({ ...b.state, seq: 0 }).toEqual({ ...a.state, seq: 0 });
    expect(allSteps(b.steps)).toEqual(allSteps(a.steps));
    // The same panes stored, each once: no message of a run's batch is taken for another's.
    const panes = (m: Map<string, Uint8Array>): string[] =>
      [...m.values()].flatMap((body) => readPaneRecords(body).map((r) => JSON.stringify(r))).sort();
    expect(panes(stored[0] as Map<string, Uint8Array>).length).toBeGreaterThan(0);
    expect(panes(stored[1] as Map<string, Uint8Array>)).toEqual(panes(stored[0] as Map<string, Uint8Array>));
  });
});
