/**
 * docs/operations.md, "Metrics (`/metrics`, label `worker`)": every engine metric of the table
 * exists on a real engine's /metrics with the documented labels, and its value is what happened.
 * A worker owning partitions 4-7 of 8 reads a backfilled recording from a real nats-server; the
 * expected values come from the recording (events of its partitions, drops under each policy's
 * rule, docs/semantics.md "Late data"), from TM_PANES and TM_LATE as stored, from the checkpoint
 * files on disk and from the worker's own tm.status. The reference horizon is an hour, so window
 * state is still held at the end and its gauges are not trivially zero.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  partitionOf,
  type EngineStatusMessage,
  type LateRecord,
  type Pane,
  type PartialBatch,
} from "@tidemark/engine/protocol";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { startTestNats, waitFor, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import {
  connectNats,
  makeRecording,
  readPartials,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

const WORKER = "metrics-4-7";
/** The histogram's finite bucket bounds, seconds (docs/operations.md: 10 ms … 300 s). */
const PIPELINE_LAG_LE = ["0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300"];
const OWNED = [4, 5, 6, 7];
const events = makeRecording({ events: 3000, seed: 11 });
const owned = events.filter((e) => OWNED.includes(partitionOf(e.service, 8)));

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

describe("engine /metrics as documented", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let data: string;
  let configFile: string;
  let engine: CliProcess;
  let metricsUrl: string;
  let end: number;
  let startedAt: number;

  const flags = (): string[] => [
    "--config",
    configFile,
    "--partitions",
    "4-7",
    "--worker",
    WORKER,
    "--checkpoint-every",
    "1s",
    "--checkpoint-min-wall",
    "50ms",
    "--keep-checkpoints",
    "1000",
  ];

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    data = tempDir("engine-metrics");
    configFile = join(data, "tidemark.config.json");
    writeFileSync(configFile, JSON.stringify({ referenceHorizon: "1h" }));
    startedAt = Date.now();
    engine = startEngine(nats.url, data, flags());
    metricsUrl = ((await engine.ready).engine as { metrics: string }).metrics;
    // Paced in small messages (25 events: 120 messages over about 5 s of wall time and 60 s of log
    // time, a checkpoint due every 1 s of it), so the worker goes through several checkpoints on the
    // way: a checkpoint waits for the acks of what came before it, and in one 500-event message per
    // partition the whole recording could pass before the first checkpoint's acks returned.
    end = (await runBackfill(nats.url, writeRecording(data, events), ["--rate", "600", "--batch", "25"]))
      .endOfRecordingTs;
    await waitForStatus(nc, (s) => s.worker === WORKER && (s.logTime ?? 0) >= end, 60_000, "the end of the recording");
  }, 120_000);
  afterAll(async () => {
    if (engine?.child.exitCode === null) engine.child.kill("SIGKILL");
    await nc?.close();
    await nats?.stop();
  });

  async function scrape(): Promise<Sample[]> {
    return parse(await (await fetch(metricsUrl)).text());
  }

  const only = (samples: Sample[], name: string): Sample[] => samples.filter((s) => s.name === name);
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
    only(samples, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

  function checkpointFiles(): string[] {
    const dir = join(data, "checkpoints", WORKER);
    return readdirSync(dir)
      .filter((n) => /^checkpoint-\d+\.tmck$/.test(n))
      .sort()
      .map((n) => join(dir, n));
  }

  it("carries every documented metric with its documented labels, each labelled with the worker", async () => {
    const samples = await scrape();
    const documented: Record<string, string[]> = {
      tidemark_engine_events_total: [],
      tidemark_engine_partial_batches_total: [],
      tidemark_engine_dropped_window_events_total: ["policy"],
      tidemark_engine_dropped_events_total: ["policy"],
      tidemark_engine_late_accepted_window_events_total: ["policy"],
      tidemark_engine_late_accepted_events_total: ["policy"],
      tidemark_engine_key_overflow_events_total: ["key"],
      tidemark_engine_panes_emitted_total: ["kind", "policy"],
      tidemark_engine_watermark_lag_seconds: ["policy"],
      tidemark_engine_partition_idle: ["partition"],
      tidemark_engine_state_keys: [],
      tidemark_engine_state_bytes: [],
      tidemark_engine_session_keys: [],
      tidemark_engine_session_keys_limit: [],
      tidemark_engine_session_rows: [],
      tidemark_engine_session_state_bytes: [],
      tidemark_engine_session_overflow_events_total: [],
      tidemark_engine_checkpoint_duration_seconds_count: [],
      tidemark_engine_checkpoint_pause_seconds_bucket: ["le"],
      tidemark_engine_checkpoint_pause_seconds_count: [],
      tidemark_engine_checkpoint_bytes: [],
      tidemark_engine_checkpoints_corrupt_total: [],
      tidemark_engine_pipeline_lag_seconds_bucket: ["le"],
      tidemark_engine_pipeline_lag_seconds_count: [],
      tidemark_engine_pipeline_lag_seconds_sum: [],
      tidemark_engine_publish_in_flight_messages: ["stream"],
      tidemark_engine_publish_in_flight_bytes: ["stream"],
      tidemark_engine_publish_waiting_messages: ["stream"],
      tidemark_engine_publish_waiting_bytes: ["stream"],
      tidemark_engine_publish_in_flight_limit_messages: ["stream"],
      tidemark_engine_publish_in_flight_limit_bytes: ["stream"],
      tidemark_engine_publish_resends_total: ["stream"],
      tidemark_engine_input_held_seconds_total: [],
      tidemark_engine_input_queued_events: ["partition"],
    };
    for (const [name, labels] of Object.entries(documented)) {
      const got = only(samples, name);
      expect(got.length, name).toBeGreaterThan(0);
      for (const s of got) expect(Object.keys(s.labels).sort(), name).toEqual(["worker", ...labels].sort());
    }
    const ours = samples.filter((s) => s.name.startsWith("tidemark_engine_"));
    expect(ours.filter((s) => s.labels.worker !== WORKER)).toEqual([]);
    // Process metrics under the role's prefix, without the nodejs_active_*_total sums.
    expect(ours.some((s) => s.name.startsWith("tidemark_engine_process_"))).toBe(true);
    expect(ours.some((s) => s.name.startsWith("tidemark_engine_nodejs_"))).toBe(true);
    expect(ours.filter((s) => /^tidemark_engine_nodejs_active_\w+_total$/.test(s.name))).toEqual([]);
  });

  it("carries every metric docs/operations.md's table documents, with the labels it names", async () => {
    const doc = readFileSync(fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)), "utf8");
    const rows = doc.split("\n").filter((l) => l.startsWith("| `tidemark_engine_"));
    const named = rows.flatMap((r) => [
      ...(r.split(" | ")[0] ?? "").matchAll(/`(tidemark_engine_\w+)(?:\{([^}]*)\})?`/g),
    ]);
    expect(named.length).toBeGreaterThan(25);
    const samples = await scrape();
    for (const [, name, labels] of named) {
      const want = (labels ?? "")
        .split(",")
        .filter(Boolean)
        .map((l) => (l.split("=")[0] as string).trim());
      // A histogram is documented by its name: its series are _bucket (le), _sum and _count.
      const got =
        only(samples, name as string).length > 0 ? only(samples, name as string) : only(samples, `${name}_count`);
      expect(got.length, name).toBeGreaterThan(0);
      for (const x of got) expect(Object.keys(x.labels).sort(), name).toEqual(["worker", ...want].sort());
    }
  });

  it("counts what happened: events, drops, panes, watermark lag, idle flags, state, checkpoints, lag", async () => {
    const panes = (await readStream(nc, "TM_PANES")).map((b) => JSON.parse(b) as Pane);
    const late = (await readStream(nc, "TM_LATE")).map((b) => JSON.parse(b) as LateRecord);
    // Everything emitted is stored (the sink has flushed) and no checkpoint is still being written.
    let samples: Sample[] = [];
    await waitFor(
      async () => {
        samples = await scrape();
        const emitted = only(samples, "tidemark_engine_panes_emitted_total").reduce((n, s) => n + s.value, 0);
        const stored = (await readStream(nc, "TM_PANES")).length;
        const partials = (await readPartials(nc)).length;
        return (
          emitted === stored &&
          value(samples, "tidemark_engine_partial_batches_total") === partials &&
          value(samples, "tidemark_engine_checkpoint_duration_seconds_count") === checkpointFiles().length
        );
      },
      30_000,
      "panes stored and checkpoints written",
    );
    const status: EngineStatusMessage = await waitForStatus(nc, (s) => s.worker === WORKER, 10_000, "a status");
    samples = await scrape();
    const scrapedAt = Date.now();

    expect(owned.length).toBeGreaterThan(500);
    expect(owned.length).toBeLessThan(events.length);
    expect(value(samples, "tidemark_engine_events_total")).toBe(owned.length);
    expect(status.eventsTotal).toBe(owned.length);
    // Stage-1 partials: the owned partitions' records, one batch per 100 ms tick, none lost or doubled.
    const partials = await readPartials(nc);
    expect(partials.length).toBeGreaterThan(100);
    expect(partials.every((b) => b.worker === WORKER && b.partitions.join() === "4,5,6,7")).toBe(true);
    expect(partials.every((b, i) => i === 0 || b.from === (partials[i - 1] as PartialBatch).to)).toBe(true);
    const inBatches = partials.reduce((n, b) => n + b.clocks.reduce((m, c) => m + c.events, 0), 0);
    const lastTo = (partials.at(-1) as PartialBatch).to;
    expect(inBatches).toBe(owned.filter((e) => e.ingest_ts < lastTo).length);

    const cfg = defaultCoreConfig();
    for (const policy of cfg.policies) {
      const lagMs = policy.watermark.kind === "arrival-lag" ? policy.watermark.lagMs : NaN;
      // One drop per (event, window) behind W + grace at the event's arrival.
      const drops = cfg.windows.reduce(
        (n, w) =>
          n +
          owned.filter((e) => Math.floor(e.ts / w.sizeMs) * w.sizeMs + w.sizeMs + policy.graceMs <= e.ingest_ts - lagMs)
            .length,
        0,
      );
      const name = policy.name;
      // An event is dropped (as an event) when it is dropped from at least one of its windows.
      const droppedEvents = owned.filter((e) =>
        cfg.windows.some(
          (w) => Math.floor(e.ts / w.sizeMs) * w.sizeMs + w.sizeMs + policy.graceMs <= e.ingest_ts - lagMs,
        ),
      ).length;
      expect(value(samples, "tidemark_engine_dropped_window_events_total", { policy: name }), name).toBe(drops);
      expect(value(samples, "tidemark_engine_dropped_events_total", { policy: name }), name).toBe(droppedEvents);
      expect(late.filter((r) => r.policy === name).length, name).toBe(drops);
      expect(value(samples, "tidemark_engine_watermark_lag_seconds", { policy: name }), name).toBe(lagMs / 1000);
      for (const kind of new Set(panes.filter((p) => p.policy === name).map((p) => p.kind)))
        expect(value(samples, "tidemark_engine_panes_emitted_total", { policy: name, kind }), `${name} ${kind}`).toBe(
          panes.filter((p) => p.policy === name && p.kind === kind).length,
        );
    }
    expect(value(samples, "tidemark_engine_dropped_window_events_total", { policy: "dashboard" })).toBeGreaterThan(0);
    expect(value(samples, "tidemark_engine_dropped_window_events_total", { policy: "billing" })).toBe(0);
    // Fewer dropped events than (event, window) pairs: a late event misses its 10 s and its 60 s window.
    expect(value(samples, "tidemark_engine_dropped_events_total", { policy: "dashboard" })).toBeLessThan(
      value(samples, "tidemark_engine_dropped_window_events_total", { policy: "dashboard" }) ?? 0,
    );
    expect(value(samples, "tidemark_engine_key_overflow_events_total", { key: "service" })).toBe(0);

    // Every publish acknowledged, nothing waiting; resends (an ack later than its timeout on a busy
    // machine) as the worker's status counts them; the bounds as configured (the defaults).
    for (const stream of ["TM_PANES", "TM_PARTIALS"]) {
      for (const m of ["in_flight_messages", "in_flight_bytes", "waiting_messages", "waiting_bytes"])
        expect(value(samples, `tidemark_engine_publish_${m}`, { stream }), `${stream} ${m}`).toBe(0);
      expect(value(samples, "tidemark_engine_publish_resends_total", { stream }), stream).toBe(
        status.backpressure?.streams[stream]?.resends ?? 0,
      );
      expect(value(samples, "tidemark_engine_publish_in_flight_limit_bytes", { stream })).toBe(64 * 1024 * 1024);
    }
    expect(value(samples, "tidemark_engine_publish_in_flight_limit_messages", { stream: "TM_PANES" })).toBe(4096);
    expect(value(samples, "tidemark_engine_publish_in_flight_limit_messages", { stream: "TM_PARTIALS" })).toBe(256);
    expect(value(samples, "tidemark_engine_input_held_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(only(samples, "tidemark_engine_input_queued_events").map((x) => [x.labels.partition, x.value])).toEqual(
      OWNED.map((p) => [String(p), 0]),
    );

    // Idle flags by partition id (4-7, not lanes 0-3), as the worker's status says.
    const idle = only(samples, "tidemark_engine_partition_idle");
    expect(idle.map((s) => s.labels.partition).sort()).toEqual(OWNED.map(String));
    for (const s of idle)
      expect(s.value, `partition ${s.labels.partition}`).toBe(
        status.partitions[OWNED.indexOf(Number(s.labels.partition))]?.idle ? 1 : 0,
      );

    expect(value(samples, "tidemark_engine_state_keys")).toBe(status.stateKeys);
    expect(value(samples, "tidemark_engine_state_bytes")).toBe(status.stateBytes);
    expect(status.stateKeys).toBeGreaterThan(0);
    expect(status.stateBytes).toBeGreaterThan(status.stateKeys);

    const files = checkpointFiles();
    expect(files.length).toBeGreaterThanOrEqual(2);
    expect(value(samples, "tidemark_engine_checkpoint_bytes")).toBe(statSync(files.at(-1) as string).size);
    expect(value(samples, "tidemark_engine_checkpoints_corrupt_total")).toBe(0);
    // One pause per checkpoint written, each within that checkpoint's duration (which adds ack waits and the write).
    const pauses = value(samples, "tidemark_engine_checkpoint_pause_seconds_count") as number;
    expect(pauses).toBe(value(samples, "tidemark_engine_checkpoint_duration_seconds_count"));
    expect(value(samples, "tidemark_engine_checkpoint_pause_seconds_sum")).toBeGreaterThan(0);
    expect(value(samples, "tidemark_engine_checkpoint_pause_seconds_sum")).toBeLessThanOrEqual(
      value(samples, "tidemark_engine_checkpoint_duration_seconds_sum") as number,
    );

    // A histogram over the events handled: each was handled after the engine started and before
    // the scrape, at a log time within the recording's ingest_ts.
    const count = value(samples, "tidemark_engine_pipeline_lag_seconds_count") as number;
    expect(count).toBe(owned.length);
    const buckets = only(samples, "tidemark_engine_pipeline_lag_seconds_bucket");
    expect(buckets.map((b) => b.labels.le)).toEqual([...PIPELINE_LAG_LE, "+Inf"]);
    expect(buckets.at(-1)?.value).toBe(count);
    // The recording's ingest_ts lie years in the past: every item's lag is above the last bound.
    expect(startedAt - end).toBeGreaterThan(300_000);
    expect(buckets.slice(0, -1).map((b) => b.value)).toEqual(PIPELINE_LAG_LE.map(() => 0));
    const mean = (value(samples, "tidemark_engine_pipeline_lag_seconds_sum") as number) / count;
    const first = Math.min(...owned.map((e) => e.ingest_ts));
    expect(mean).toBeGreaterThanOrEqual((startedAt - end) / 1000);
    expect(mean).toBeLessThanOrEqual((scrapedAt - first) / 1000);
  });

  it("counts the corrupt checkpoint files it skipped at start", async () => {
    await stopGracefully(engine);
    const files = checkpointFiles();
    for (const f of files.slice(-2)) {
      const bytes = readFileSync(f);
      bytes.writeUInt8((bytes[bytes.length >> 1] ?? 0) ^ 0xff, bytes.length >> 1);
      writeFileSync(f, bytes);
    }
    engine = startEngine(nats.url, data, flags());
    const ready = (await engine.ready).engine as { metrics: string; restoredFrom: string };
    metricsUrl = ready.metrics;
    expect(ready.restoredFrom).toBe(files.at(-3));
    expect(value(await scrape(), "tidemark_engine_checkpoints_corrupt_total")).toBe(2);
    await stopGracefully(engine);
  });
});
