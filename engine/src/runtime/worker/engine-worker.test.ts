/**
 * An engine worker's checkpointed state is one WorkerState, symmetric (docs/decisions/0045-operator-host.md,
 * decision 6): a worker built bare and given, through `restore`, the state another worker's
 * `handleCheckpoint` took, takes that very state at its own first cut, through the checkpoint
 * header and back. The other worker is the oracle: it ran the input; the restored one saw none.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createCore, restoreCore } from "../../core/index.js";
import { allSteps } from "../../core/snapshot/snapshot-steps.js";
import type { TelemetryEvent } from "../../protocol.js";
import { decodeCheckpoint, encodeCheckpoint } from "../checkpoint/checkpoint-codec.js";
import { checkpointHeader } from "../checkpoint/checkpoint-frame.js";
import { CheckpointStore } from "../checkpoint/checkpoint-store.js";
import { workerStateFrame } from "../checkpoint/state-frames.js";
import type { WorkerState } from "../checkpoint/worker-state.js";
import { parseEngineConfig, type EngineConfig } from "../config/config.js";
import { OperatorHost } from "../host/operator-host.js";
import { quietSink } from "../host/__fixtures__/quiet-sink.js";
import { EngineWorker } from "./engine-worker.js";

const T0 = 1_700_000_000_000;

/** A worker on a host that is never started: its input is fed by hand, nothing reaches NATS. */
function worker(config: EngineConfig): EngineWorker {
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const store = new CheckpointStore("unused");
  const opts = { log, compressPanes: false, store, owner: config };
  const js = {} as JetStreamClient;
  const host = new OperatorHost(
    quietSink(),
    opts,
    (ctx) => new EngineWorker(config, { create: createCore, restore: restoreCore }, js, ctx),
  );
  return host.operator;
}

/** `n` events of lane-spread services, one every `stepMs` of ingest time from `from`. */
function events(n: number, from: number, stepMs: number): TelemetryEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    ts: from + i * stepMs - (i % 7) * 300,
    ingest_ts: from + i * stepMs,
    service: `svc${i % 3}`,
    route: `/r${i % 2}`,
    status: i % 11 === 0 ? 503 : 200,
    latency_ms: 5 + (i % 40),
    user: `u${i % 17}`,
  }));
}

describe("EngineWorker checkpointed state", () => {
  it("restores exactly what its handleCheckpoint took: offsets, a message handled in part, open groups, the partials' tick, the core", () => {
    const config = parseEngineConfig({ file: { partitionCount: 2 } });
    const a = worker(config);
    // Lane 0: three messages over 90 s of ingest time, so windows close and panes are emitted
    // while a message is being handled; lane 1: heartbeats keeping pace. The last batch stops
    // inside lane 0's third message.
    a.interleave.push(0, 1, events(40, T0, 1_000));
    a.interleave.push(1, 1, null, T0 + 40_000);
    a.interleave.push(0, 2, events(40, T0 + 40_000, 1_000));
    a.interleave.push(1, 2, null, T0 + 80_000);
    a.interleave.push(0, 3, events(40, T0 + 80_000, 1_000));
    a.interleave.push(1, 3, null, T0 + 130_000);
    let handled = 0;
    while (handled < 95) handled += a.processBatch(a.input.pull(5));
    const cut = a.handleCheckpoint();
    const taken = cut.state;
    const snapshot = allSteps(cut.steps);
    // 95 items: lane 0's first two messages (80 events), lane 1's heartbeats at +40 s and +80 s, and
    // 13 events of lane 0's third message.
    expect(taken.offsets[0]).toMatchObject({ lastSeq: 2, partialSeq: 3, partialCount: 13 });
    expect(taken.pending?.length).toBeGreaterThan(0);
    expect(taken.partials?.from).not.toBeNull();

    // Through the header and back, as a checkpoint file carries it.
    const owner = { operatorId: config.worker, partitionCount: 2, partitions: config.partitions };
    const header = checkpointHeader(owner, a.logTime(), 0, workerStateFrame.write(taken), undefined, false);
    const file = decodeCheckpoint(encodeCheckpoint({ header, snapshot: new Uint8Array(0) }), "f");
    const read: WorkerState = workerStateFrame.read(file.header, "f");
    expect(read).toEqual(taken);

    const b = worker(config);
    b.restore({ state: read, core: restoreCore(config.core, snapshot), logTime: file.header.logTime });
    expect(b.logTime()).toBe(a.logTime());
    const again = b.handleCheckpoint();
    expect(again.state).toEqual(taken);
    expect(allSteps(again.steps)).toEqual(snapshot);
  });
});
