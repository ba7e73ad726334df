/**
 * The runtime benchmark's pipeline-lag rows (runtime.ts): a fresh engine on an emptied TM_EVENTS
 * while a worker thread publishes fresh events the way ingest does (live-feed.ts: compact batches,
 * punctuation every 100 ms, heartbeats each second) at a given rate; the lag is the engine's own
 * measure, wall clock − log time per item handled (`tm.status` `pipelineLag`, pipeline-lag.ts),
 * p50 and p99 over the run.
 */
import { Worker } from "node:worker_threads";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { STREAM_EVENTS } from "../protocol.js";
import { parseEngineConfig } from "../runtime/config/config.js";
import { startEngine } from "../runtime/worker/start-engine.js";
import type { LiveFeedOptions, LiveFeedResult } from "./live-feed.js";

export interface LagRun {
  rate: number;
  /** Events per second the feed reached. */
  sent: number;
  p50: number | null;
  p99: number | null;
  /** Messages the engine published (pane and late batches) per event. */
  publishesPerEvent: number;
}

export async function liveLag(url: string, dir: string, rate: number, durationMs: number): Promise<LagRun> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  await (await jetstreamManager(nc)).streams.purge(STREAM_EVENTS);
  await nc.close();
  const data = join(dir, `lag-${rate}`);
  const config = parseEngineConfig({ flags: { nats: url, data, "metrics-port": "0" } });
  const running = await startEngine(config, { logger: silentLogger() });
  const w = running.engine;
  try {
    const options: LiveFeedOptions = { url, rate, durationMs, tickMs: 200 };
    const worker = new Worker(new URL("./live-feed.js", import.meta.url), { workerData: options });
    const fed = await new Promise<LiveFeedResult>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    const deadline = Date.now() + 30_000;
    while (w.eventsTotal < fed.events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (w.eventsTotal < fed.events) throw new Error(`engine handled ${w.eventsTotal} of ${fed.events} events`);
    const p = running.host.pipelineLag.percentiles(Date.now());
    return {
      rate,
      sent: Math.round(fed.events / (fed.elapsedMs / 1000)),
      p50: p.p50,
      p99: p.p99,
      publishesPerEvent: running.host.sink.acked / fed.events,
    };
  } finally {
    await running.close();
  }
}

export function silentLogger(): never {
  const noop = (): void => undefined;
  const l = { info: noop, warn: noop, error: noop, debug: noop, flush: noop };
  return l as never;
}
