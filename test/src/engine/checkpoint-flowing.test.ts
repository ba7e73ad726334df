/**
 * A checkpoint cut while events flow is the state at its cut (docs/operations.md, "Checkpoints";
 * docs/decisions/0016-checkpoints-without-pause.md). The real engine runs in-process over a real
 * nats-server while `tidemark backfill` publishes a recording with thousands of keys, checkpointing
 * every second of log time. A tap between the runtime and the core records every input and pane
 * in order, and for each snapshot the input position where it was cut; the snapshot is encoded
 * across event-loop turns (the tap sees the loop turn during it) and no input may reach the core
 * until it is done. Then every checkpoint file on disk is restored into a fresh core and fed the
 * inputs after its cut: it must emit exactly the panes the straight run emitted after that point.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createCore,
  restoreCore,
  snapshotStepsOf,
  type CoreOutput,
  type SnapshotSteps,
  type StreamCore,
} from "@tidemark/engine/core";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { decodeCheckpoint, parseEngineConfig, startEngine, type EngineConfig } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import {
  connectNats,
  lastPanes,
  makeRecording,
  runBackfill,
  tempDir,
  truthByPane,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

type Input = { lane: number; e: TelemetryEvent } | { lane: number; ts: number };

interface Cut {
  /** Inputs the core had been fed at the cut, and panes it had emitted. */
  inputs: number;
  panes: number;
  /** The event loop ran a turn while this snapshot was being encoded. */
  turned: boolean;
  /** Inputs that reached the core while it was being encoded (must be none). */
  fedDuring: number;
  bytes?: Uint8Array;
}

/** The core, recording its inputs, its panes and its snapshots' cuts. */
function recorded(core: StreamCore): { core: StreamCore; inputs: Input[]; panes: string[]; cuts: Cut[] } {
  const inputs: Input[] = [];
  const panes: string[] = [];
  const cuts: Cut[] = [];
  let encoding: Cut | null = null;
  let inner: CoreOutput | undefined;
  let outer: CoreOutput = { pane: () => undefined, late: () => undefined };
  const tap = (out: CoreOutput): CoreOutput => {
    if (out !== inner) {
      inner = out;
      outer = { pane: (p) => (panes.push(JSON.stringify(p)), out.pane(p)), late: (r) => out.late(r) };
    }
    return outer;
  };
  const fed = (): void => {
    if (encoding !== null) encoding.fedDuring++;
  };
  const steps = (): SnapshotSteps => {
    const cut: Cut = { inputs: inputs.length, panes: panes.length, turned: false, fedDuring: 0 };
    encoding = cut;
    setImmediate(() => {
      if (encoding === cut) cut.turned = true;
    });
    const own = snapshotStepsOf(core);
    return (function* (): SnapshotSteps {
      const bytes = yield* own;
      encoding = null;
      cut.bytes = bytes;
      cuts.push(cut);
      return bytes;
    })();
  };
  return {
    inputs,
    panes,
    cuts,
    core: {
      event: (lane, e, out) => (fed(), inputs.push({ lane, e }), core.event(lane, e, tap(out))),
      heartbeat: (lane, ts, out) => (fed(), inputs.push({ lane, ts }), core.heartbeat(lane, ts, tap(out))),
      finish: (out) => core.finish(tap(out)),
      status: () => core.status(),
      snapshot: () => core.snapshot(),
      snapshotSteps: steps,
    },
  };
}

function feed(core: StreamCore, inputs: readonly Input[]): string[] {
  const panes: string[] = [];
  const out: CoreOutput = { pane: (p) => void panes.push(JSON.stringify(p)), late: () => undefined };
  for (const i of inputs) {
    if ("e" in i) core.event(i.lane, i.e, out);
    else core.heartbeat(i.lane, i.ts, out);
  }
  return panes;
}

/** The recording: thousands of keys (300 services × routes). */
function recording(): TelemetryEvent[] {
  const services = Array.from({ length: 300 }, (_, i) => `svc-${i}`);
  return makeRecording({ events: 12_000, seed: 29, services });
}

describe("checkpoints cut while events flow", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  /** One engine run over the recording, from an empty data directory, with the tap on its core. */
  async function run(attempt: number): Promise<{ t: ReturnType<typeof recorded>; config: EngineConfig }> {
    nats ??= await startTestNats();
    const dir = tempDir(`checkpoint-flowing-${attempt}`);
    const events = recording();
    const file = writeRecording(dir, events);
    const configFile = join(dir, "tidemark.config.json");
    // Many keys (so a snapshot spans turns) but few panes (so replaying the rest stays quick).
    const doc = {
      windows: ["10s", "60s"],
      policies: [{ name: "final", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "30s", mode: "final-only" }],
      referenceHorizon: "2m",
    };
    writeFileSync(configFile, JSON.stringify(doc));
    const config = parseEngineConfig({
      file: doc,
      flags: {
        nats: nats.url,
        data: join(dir, "data"),
        worker: `flowing-${attempt}`,
        "metrics-port": "0",
        "checkpoint-every": "1s",
        "checkpoint-min-wall": "20ms",
        "keep-checkpoints": "1000",
      },
    });
    let tap: ReturnType<typeof recorded> | undefined;
    const engine = await startEngine(config, {
      cores: {
        create: (c) => (tap = recorded(createCore(c))).core,
        restore: () => {
          throw new Error("this test starts from an empty data directory");
        },
      },
    });
    const nc = await connectNats(nats.url);
    try {
      const summary = await runBackfill(nats.url, file, ["--config", configFile]);
      await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 90_000, "end of recording");
      await engine.close();
    } finally {
      await engine.close();
      await nc.close();
    }
    return { t: tap as ReturnType<typeof recorded>, config };
  }

  /** A cut inside the stream whose snapshot spanned event-loop turns. */
  const midStream = (t: ReturnType<typeof recorded>): Cut[] =>
    t.cuts.filter((c) => c.turned && c.inputs > 0 && c.inputs < t.inputs.length);

  it("each checkpoint restores to the state at its cut: fed the rest, it emits the straight run's panes", async () => {
    // The test has teeth only with a cut mid-stream. Cuts are spaced by 20× the last pause and wait
    // for the previous checkpoint's write (pane acks, fsync): on a loaded machine one slow write can
    // outlast the whole stream, so the run is repeated (fresh data directory) until one has such a
    // cut, up to three times. Every property below is checked on the run that has it.
    let attempt = 0;
    let r = await run(attempt);
    while (midStream(r.t).length === 0 && attempt < 2) r = await run(++attempt);
    const { t, config } = r;

    // Snapshots big enough to span event-loop turns, cut mid-stream.
    const seen = t.cuts.map((c) => ({ inputs: c.inputs, turned: c.turned }));
    expect(
      midStream(t).length,
      `${t.inputs.length} inputs; cuts ${JSON.stringify(seen)}; runs ${attempt + 1}`,
    ).toBeGreaterThan(0);
    expect(t.cuts.map((c) => c.fedDuring)).toEqual(t.cuts.map(() => 0));
    // The straight run's panes are the recording's truth (written from the raw events): each
    // service window's final pane has the events that arrived before end + lag + grace.
    const last = lastPanes(t.panes.map((b) => JSON.parse(b) as Pane));
    for (const sizeMs of [10_000, 60_000]) {
      const truth = truthByPane(recording(), { name: "final", lagMs: 2_000, graceMs: 30_000 }, sizeMs);
      const got = new Map<string, { count: number; errors: number }>();
      for (const [id, p] of last)
        if (p.key.route === undefined && p.window.end - p.window.start === sizeMs)
          got.set(id, { count: p.value.count, errors: p.value.errors });
      expect(got.size, `${sizeMs} ms windows`).toBeGreaterThan(300);
      expect(got).toEqual(truth);
    }

    const files = readdirSync(config.checkpointDir).filter((n) => /^checkpoint-\d+\.tmck$/.test(n));
    expect(files.length).toBe(t.cuts.length);
    for (const name of files) {
      const cp = decodeCheckpoint(readFileSync(join(config.checkpointDir, name)), name);
      const cut = t.cuts.find((c) => c.bytes !== undefined && Buffer.from(c.bytes).equals(Buffer.from(cp.snapshot)));
      expect(cut, `${name} is a snapshot the core encoded`).toBeDefined();
      const c = cut as Cut;
      const rest = feed(restoreCore(config.core, cp.snapshot), t.inputs.slice(c.inputs));
      expect(rest.length, name).toBe(t.panes.length - c.panes);
      expect(rest, name).toEqual(t.panes.slice(c.panes));
    }
  }, 600_000);
});
