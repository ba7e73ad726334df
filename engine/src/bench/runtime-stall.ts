/**
 * The runtime benchmark's stall rows (runtime.ts; docs/decisions/0035-backpressure.md): an engine
 * worker in a child process (two-stage-worker.ts) fed live at `rate` events/s (live-feed.ts, as
 * ingest publishes) for RUN_MS, TM_PANES taken away for `stallMs` from STALL_AT_MS on (the stream
 * deleted, then created again: publishes answered "no responders" meanwhile, so none is
 * acknowledged and the window fills) while the feed goes on and a backlog grows in TM_EVENTS.
 * Reported: the child's peak resident memory, TM_PANES's peak bytes in flight, the resends, the
 * input held, and how long after TM_PANES is back the engine's lag (wall clock − log time) is
 * under a second again. The same run with no stall is the baseline.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, eventsStreamSpec, panesStreamSpec } from "../nats/index.js";
import { STREAM_EVENTS, STREAM_PANES } from "../protocol.js";
import type { LiveFeedOptions, LiveFeedResult } from "./live-feed.js";
import { row } from "./runtime-setup.js";
import { freshOutputStreams, WorkerProc } from "./two-stage-runs.js";

export const RUN_MS = 15_000;
/** The load the field saw (10k events/s over HTTP): well under this machine's capacity. */
const STALL_RATE = 10_000;
const STALL_AT_MS = 3_000;
const RECOVERED_LAG_MS = 1_000;

export interface StallRun {
  rate: number;
  stallMs: number;
  /** The window's bound in messages (undefined: the default, 4096). */
  maxInFlight: number | undefined;
  /** Resident memory of the engine process: at the stall's start (or the same time), and the run's peak, MB. */
  rssAtStallMb: number;
  peakRssMb: number;
  peakInFlightBytes: number;
  resends: number;
  heldS: number;
  /** Wall ms from TM_PANES back (or the same time) to the lag under a second; NaN if never. */
  recoveryMs: number;
  /** The engine's lag at the stall's end, ms. */
  lagAtEndMs: number;
}

export async function stallRun(
  url: string,
  dir: string,
  rate: number,
  stallMs: number,
  maxInFlight?: number,
): Promise<StallRun> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  await ensureStream(jsm, eventsStreamSpec());
  await freshOutputStreams(url, STREAM_EVENTS);
  const name = `stall-${stallMs}-${maxInFlight ?? "default"}`;
  const data = join(dir, name);
  mkdirSync(data, { recursive: true });
  const flags: Record<string, string> = maxInFlight === undefined ? {} : { "max-in-flight": String(maxInFlight) };
  const w = new WorkerProc({ url, data, worker: name, partitions: "all", partials: false, flags });
  await w.ready();
  w.go();
  while (w.status === undefined) await sleep(10);
  const feed = startFeed({ url, rate, durationMs: RUN_MS, tickMs: 200 });
  const t0 = Date.now();
  const r: StallRun = {
    rate,
    stallMs,
    maxInFlight,
    rssAtStallMb: NaN,
    peakRssMb: 0,
    peakInFlightBytes: 0,
    resends: 0,
    heldS: 0,
    recoveryMs: NaN,
    lagAtEndMs: NaN,
  };
  let phase: "before" | "stalled" | "after" = "before";
  let backAt = 0;
  while (Date.now() - t0 < RUN_MS + 15_000) {
    w.check();
    const now = Date.now();
    const s = w.status;
    const lag = s.logTime === null ? Infinity : now - s.logTime;
    r.peakRssMb = Math.max(r.peakRssMb, s.rssMb);
    r.peakInFlightBytes = Math.max(r.peakInFlightBytes, s.inFlightBytes);
    if (phase === "before" && now - t0 >= STALL_AT_MS) {
      r.rssAtStallMb = s.rssMb;
      if (stallMs > 0) await jsm.streams.delete(STREAM_PANES);
      phase = "stalled";
    } else if (phase === "stalled" && now - t0 >= STALL_AT_MS + stallMs) {
      if (stallMs > 0) await ensureStream(jsm, panesStreamSpec());
      r.lagAtEndMs = lag;
      backAt = now;
      phase = "after";
    } else if (phase === "after" && Number.isNaN(r.recoveryMs) && lag < RECOVERED_LAG_MS) r.recoveryMs = now - backAt;
    if (phase === "after" && !Number.isNaN(r.recoveryMs) && now - t0 >= RUN_MS) break;
    await sleep(25);
  }
  await feed;
  r.resends = w.status.resends;
  r.heldS = w.status.heldMs / 1000;
  await w.stop();
  await nc.close();
  return r;
}

function startFeed(options: LiveFeedOptions): Promise<LiveFeedResult> {
  const worker = new Worker(new URL("./live-feed.js", import.meta.url), { workerData: options });
  return new Promise<LiveFeedResult>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  }).finally(() => void worker.terminate());
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The stall rows at STALL_RATE: a baseline, a 5 s outage with the default window, the same with a 16-message one. */
export async function stallRows(url: string, dir: string): Promise<string[]> {
  const base = await stallRun(url, dir, STALL_RATE, 0);
  const wide = await stallRun(url, dir, STALL_RATE, 5_000);
  const narrow = await stallRun(url, dir, STALL_RATE, 5_000, 16);
  const mb = (v: number): string => `${v.toFixed(0)} MB`;
  const at = `live ${RUN_MS / 1000} s at ${STALL_RATE.toLocaleString("en-US")} events/s`;
  const stalled = (r: StallRun, window: string): string[] => [
    row(
      `  TM_PANES away 5 s (${window}): engine peak RSS / baseline`,
      `${(r.peakRssMb / base.peakRssMb).toFixed(2)}×`,
      `${mb(r.peakRssMb)}; in flight at most ${(r.peakInFlightBytes / 1024 / 1024).toFixed(1)} MiB; ${r.resends} resends`,
    ),
    row(
      `  … input held; lag when TM_PANES is back; back under 1 s after`,
      `${r.heldS.toFixed(1)} s`,
      `lag ${(r.lagAtEndMs / 1000).toFixed(1)} s, recovered in ${(r.recoveryMs / 1000).toFixed(1)} s`,
    ),
  ];
  return [
    row(`engine under a TM_PANES outage (docs/decisions/0035-backpressure.md), ${at}`, "", ""),
    row(`  baseline: no outage, default window (4096 messages, 64 MiB): engine peak RSS`, mb(base.peakRssMb), ""),
    ...stalled(wide, "default window: it absorbs the outage"),
    ...stalled(narrow, "a 16-message window: the input is held"),
  ];
}
