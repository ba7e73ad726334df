/**
 * Exact counts above latency thresholds (docs/semantics.md, "Latency thresholds"): every pane's
 * `latencyAbove` equals a brute-force count over the raw events it holds, in every accumulation
 * mode, across a snapshot and restore at random points, and through the two-stage dataflow's
 * partials to the merge stage's service and all-services panes. The oracle knows nothing of the
 * core but this: a policy's pane of a window holds a prefix, in arrival order, of the window's
 * events (docs/semantics.md, "Policies are snapshot schedules"), as long as its exact `count`.
 */
import { describe, expect, it } from "vitest";
import {
  ALL_SERVICES,
  decodePartialBatch,
  encodePartialBatch,
  partitionOf,
  type Pane,
  type PartialBatch,
  type TelemetryEvent,
} from "../protocol.js";
import { capture } from "./__fixtures__/capture.js";
import { coreAggregates, createCore, partialSliceLengths, restoreCore } from "./create-core.js";
import { PartialAccumulator } from "./partials/partial-accumulator.js";
import { TickAligner } from "./partials/tick-aligner.js";
import { Prng } from "./prng.js";
import type { CoreConfig, StreamCore, WindowConfig } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

const T0 = 1_767_225_600_000;
const THRESHOLDS = [50, 100, 300];
const P = 4;

const config = validateCoreConfig({
  partitions: P,
  windows: ["10s", "60s", { kind: "sliding", size: "30s", slide: "10s" }],
  policies: [
    { name: "acc", watermark: { kind: "arrival-lag", lag: "2s" }, earlyEvery: "1s", mode: "accumulating" },
    {
      name: "dis",
      watermark: { kind: "arrival-lag", lag: "1s" },
      grace: "5s",
      earlyEvery: "2s",
      lateEvery: "1s",
      mode: "discarding",
    },
    {
      name: "ret",
      watermark: { kind: "arrival-lag", lag: "3s" },
      grace: "8s",
      earlyEvery: "2s",
      lateEvery: "500ms",
      mode: "retracting",
    },
    { name: "fin", watermark: { kind: "bounded", lag: "4s" }, grace: "6s", mode: "final-only" },
  ],
  referenceHorizon: "40s",
  latencyThresholdsMs: THRESHOLDS,
});

/** Latencies around the thresholds (some exactly on one: not above it), delays mostly short, a tail up to 25 s. */
function stream(n: number, seed: number): TelemetryEvent[] {
  const rng = new Prng(seed);
  let t = T0;
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < n; i++) {
    t += rng.int(40);
    const s = rng.int(4);
    const delay = rng.next() < 0.1 ? rng.int(25_000) : rng.int(1_500);
    const r = rng.next();
    const latency =
      r < 0.1 ? (THRESHOLDS[rng.int(3)] as number) : r < 0.5 ? rng.int(400) : rng.exponential(60 + 40 * s);
    out.push({
      ts: t - delay,
      ingest_ts: t,
      service: `svc${s}`,
      route: `/r${rng.int(3)}`,
      status: rng.next() < 0.05 ? 503 : 200,
      latency_ms: latency,
      user: `u${rng.int(200)}`,
    });
  }
  return out;
}

function windowStarts(w: WindowConfig, ts: number): number[] {
  const slide = w.kind === "sliding" ? w.slideMs : w.sizeMs;
  const out: number[] = [];
  for (let s = Math.floor(ts / slide) * slide; s > ts - w.sizeMs; s -= slide) out.push(s);
  return out;
}

const keyOf = (service: string, route: string | undefined, size: number, start: number): string =>
  JSON.stringify([service, route ?? null, size, start]);

/** Each (key, window)'s latencies in arrival order: service, route and (with `all`) all-services keys. */
function windowLatencies(events: readonly TelemetryEvent[], windows: readonly WindowConfig[], all: boolean) {
  const m = new Map<string, number[]>();
  const put = (k: string, v: number): void => void (m.get(k) ?? m.set(k, []).get(k))?.push(v);
  for (const e of events)
    for (const w of windows)
      for (const s of windowStarts(w, e.ts)) {
        put(keyOf(e.service, undefined, w.sizeMs, s), e.latency_ms);
        put(keyOf(e.service, e.route, w.sizeMs, s), e.latency_ms);
        if (all) put(keyOf(ALL_SERVICES, undefined, w.sizeMs, s), e.latency_ms);
      }
  return m;
}

/**
 * Checks every pane against the brute force; returns how many panes had a count above 0 per
 * threshold with a latencyAbove strictly between 0 and the count (so the check can fail).
 */
function checkPanes(panes: readonly Pane[], events: readonly TelemetryEvent[], cfg: CoreConfig, all = false): number {
  const lat = windowLatencies(events, cfg.windows, all);
  const discarding = new Set(cfg.policies.filter((p) => p.mode === "discarding").map((p) => p.name));
  const offset = new Map<string, number>();
  let telling = 0;
  for (const p of panes) {
    const list = lat.get(keyOf(p.key.service, p.key.route, p.window.end - p.window.start, p.window.start)) ?? [];
    const from = discarding.has(p.policy) ? (offset.get(p.id) ?? 0) : 0;
    if (discarding.has(p.policy)) offset.set(p.id, from + p.value.count);
    const held = list.slice(from, from + p.value.count);
    expect(held.length, `${p.id} #${p.seq}: holds more events than the window had`).toBe(p.value.count);
    const want = Object.fromEntries(THRESHOLDS.map((t) => [String(t), held.filter((x) => x > t).length]));
    if (JSON.stringify(p.value.latencyAbove) !== JSON.stringify(want))
      expect({ id: p.id, seq: p.seq, kind: p.kind, latencyAbove: p.value.latencyAbove }).toEqual({
        id: p.id,
        seq: p.seq,
        kind: p.kind,
        latencyAbove: want,
      });
    const mid = THRESHOLDS.filter((t) => (want[String(t)] as number) > 0 && (want[String(t)] as number) < held.length);
    if (mid.length === THRESHOLDS.length) telling++;
  }
  return telling;
}

function run(events: readonly TelemetryEvent[], cuts: readonly number[] = []): Pane[] {
  const out = capture();
  let core: StreamCore = createCore(config);
  events.forEach((e, i) => {
    if (cuts.includes(i)) core = restoreCore(config, core.snapshot());
    core.event(partitionOf(e.service, P), e, out);
  });
  core.finish(out);
  return out.panes;
}

describe("latencyAbove: exact counts above each latency threshold", () => {
  const events = stream(6_000, 11);
  const panes = run(events);

  it("equals a brute-force count over the pane's events, for every pane of every mode and window", () => {
    expect(new Set(panes.map((p) => p.kind))).toEqual(new Set(["early", "on-time", "late", "final", "retract"]));
    for (const policy of config.policies) expect(panes.some((p) => p.policy === policy.name)).toBe(true);
    expect(panes.every((p) => p.value.latencyAbove !== undefined)).toBe(true);
    expect(checkPanes(panes, events, config)).toBeGreaterThan(300);
  });

  it("is carried through snapshots: a restore at random points gives the same panes", () => {
    // Compared as an idempotent sink sees them: by id and seq (docs/semantics.md, "Pane ids").
    const bySeq = (ps: readonly Pane[]): Map<string, string> =>
      new Map(ps.map((p) => [`${p.id}#${p.seq}`, JSON.stringify(p)]));
    const want = bySeq(panes);
    const rng = new Prng(5);
    for (let trial = 0; trial < 2; trial++) {
      const cuts = Array.from({ length: 4 }, () => rng.int(events.length));
      const again = run(events, cuts);
      expect(again.length).toBe(panes.length);
      const got = bySeq(again);
      const differing = [...want].filter(([k, v]) => got.get(k) !== v).map(([k]) => k);
      expect(differing.slice(0, 3), `panes differing after restores at ${cuts.join(", ")}`).toEqual([]);
    }
  });

  it("merges by addition through the two-stage partials to the merge stage's service and all-services panes", () => {
    const cfg = validateCoreConfig({ ...config, partitions: 8, policies: config.policies.slice(0, 3) });
    const evs = stream(5_000, 23);
    const got: Pane[][] = [];
    for (const workers of [
      [[0, 1, 2, 3, 4, 5, 6, 7]],
      [
        [0, 2, 4, 6],
        [1, 3, 5, 7],
      ],
    ]) {
      const merged = stageTwo(interleave(stageOne(evs, workers, cfg)), cfg);
      expect(merged.some((p) => p.key.service === ALL_SERVICES)).toBe(true);
      expect(merged.some((p) => p.key.service !== ALL_SERVICES && p.key.route === undefined)).toBe(true);
      expect(checkPanes(merged, evs, cfg, true)).toBeGreaterThan(50);
      got.push(merged);
    }
    expect(got[1]?.map((p) => JSON.stringify(p.value))).toEqual(got[0]?.map((p) => JSON.stringify(p.value)));
  });
});

/** Stage 1: one accumulator per worker (all-services and service keys), batches through their codec. */
function stageOne(events: readonly TelemetryEvent[], workers: number[][], cfg: CoreConfig): PartialBatch[][] {
  const kind = coreAggregates(cfg);
  const end = (events.at(-1) as TelemetryEvent).ingest_ts + 200_000;
  return workers.map((partitions, w) => {
    const out: PartialBatch[] = [];
    const acc = new PartialAccumulator({
      worker: `w${w}`,
      partitions,
      tickMs: 100,
      sliceMs: partialSliceLengths(cfg),
      kind,
      serviceKeys: true,
      emit: (b) => out.push(decodePartialBatch(encodePartialBatch(b))),
    });
    for (const e of events) {
      const lane = partitions.indexOf(partitionOf(e.service, cfg.partitions));
      if (lane >= 0) acc.event(lane, e);
      else acc.heartbeat(e.ingest_ts);
    }
    acc.heartbeat(end);
    return out;
  });
}

/** Round-robin over the workers' batches. */
function interleave(lists: PartialBatch[][]): PartialBatch[] {
  const out: PartialBatch[] = [];
  for (let i = 0; lists.some((l) => i < l.length); i++)
    for (const l of lists) if (i < l.length) out.push(l[i] as PartialBatch);
  return out;
}

/** Stage 2: merged ticks into a core, then finish(). */
function stageTwo(order: readonly PartialBatch[], cfg: CoreConfig): Pane[] {
  const core = createCore(cfg);
  const aligner = new TickAligner(cfg.partitions, coreAggregates(cfg), cfg.idleTimeoutMs);
  const out = capture();
  order.forEach((b, now) => {
    expect(aligner.offer(b, now)).not.toBe("overlap");
    const { ticks, logTime } = aligner.release(now);
    for (const t of ticks) core.partial?.(t, out);
    if (logTime !== null) for (let p = 0; p < cfg.partitions; p++) core.heartbeat(p, logTime, out);
  });
  core.finish(out);
  return out.panes;
}
