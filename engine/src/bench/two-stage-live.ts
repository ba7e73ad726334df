/**
 * The two-stage benchmark's live run (two-stage.ts): on an emptied TM_EVENTS, the merge operator in
 * this process and two workers as child processes (partitions 0-3 and 4-7), fed live by a worker
 * thread (live-feed.ts, as runtime-lag.ts does) at a given rate. The lags are the operators' own
 * measures, wall clock − log time per item handled (pipeline-lag.ts): the merge operator's when a
 * merged tick is handled (through both stages), each worker's when its core handles a record.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { STREAM_EVENTS } from "../protocol.js";
import type { LiveFeedOptions, LiveFeedResult } from "./live-feed.js";
import { freshOutputStreams, merge, WorkerProc } from "./two-stage-runs.js";

export interface LiveRun {
  rate: number;
  /** Events per second the feed reached. */
  sent: number;
  fed: number;
  mergedEvents: number;
  merge: { p50: number | null; p99: number | null };
  workers: Array<{ worker: string; partitions: string; events: number; p50: number | null; p99: number | null }>;
  aligned: number[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function liveTwoStage(url: string, data: string, rate: number, durationMs: number): Promise<LiveRun> {
  await freshOutputStreams(url, STREAM_EVENTS);
  const { m, aligned } = await merge(url, join(data, "merge"), "merge-live");
  const procs = ["0-3", "4-7"].map(
    (partitions, i) =>
      new WorkerProc({ url, data: join(data, `w${i}`), worker: `live-w${i}`, partitions, partials: true }),
  );
  try {
    await Promise.all(procs.map((p) => p.ready()));
    for (const p of procs) p.go();
    while (procs.some((p) => p.status === undefined)) {
      procs.forEach((p) => p.check());
      await sleep(10);
    }
    const options: LiveFeedOptions = { url, rate, durationMs, tickMs: 200 };
    const feeder = new Worker(new URL("./live-feed.js", import.meta.url), { workerData: options });
    const fed = await new Promise<LiveFeedResult>((resolve, reject) => {
      feeder.once("message", resolve);
      feeder.once("error", reject);
    });
    await feeder.terminate();
    const handled = (): number => procs.reduce((n, p) => n + (p.status?.events ?? 0), 0);
    const deadline = Date.now() + 30_000;
    while (handled() < fed.events && Date.now() < deadline) await sleep(20);
    if (handled() < fed.events) throw new Error(`workers handled ${handled()} of ${fed.events} events`);
    // The last tick goes to the merge once a later heartbeat closes it (none comes after the feed stops: it may stay out).
    const mergeDeadline = Date.now() + 1_000;
    while (m.operator.eventsTotal < fed.events && Date.now() < mergeDeadline) await sleep(20);
    const lag = m.host.pipelineLag.percentiles(Date.now());
    const reports = await Promise.all(procs.map((p) => p.report()));
    return {
      rate,
      sent: Math.round(fed.events / (fed.elapsedMs / 1000)),
      fed: fed.events,
      mergedEvents: m.operator.eventsTotal,
      merge: { p50: lag.p50, p99: lag.p99 },
      workers: procs.map((p, i) => ({
        worker: p.args.worker,
        partitions: p.args.partitions,
        events: reports[i]?.events ?? 0,
        p50: reports[i]?.p50 ?? null,
        p99: reports[i]?.p99 ?? null,
      })),
      aligned,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await m.close();
  }
}
