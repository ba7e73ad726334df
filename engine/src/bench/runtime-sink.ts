/**
 * The runtime benchmark's publisher rows (runtime.ts): 20k publishes with a message id to one
 * stream, acknowledged, each way the runtime publishes: PaneSink (one inbox, batched acks, a
 * window of 1024), InboxAcks (a promise per publish through one inbox; TM_PARTIALS, ingest's
 * TM_EVENTS) and, as the baseline, `JetStreamClient.publish`, both with 1024 in flight. Rates and
 * this process's CPU per publish, in the same run.
 */
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { InboxAcks } from "../nats/inbox-acks.js";
import { MAX_IN_FLIGHT_BYTES, PaneSink } from "../runtime/output/pane-sink.js";
import { row } from "./runtime-setup.js";

/** Wall and this process's CPU time of `run`, ms. */
async function timed(run: () => Promise<void>): Promise<{ ms: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const cpu = process.cpuUsage(cpu0);
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** `n` publishes by `publish`, at most 1024 unacknowledged. */
async function pipelined(n: number, publish: (i: number) => Promise<unknown>): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < n; i++) {
    const p: Promise<unknown> = publish(i).then(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= 1024) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
}

export async function sinkRates(url: string): Promise<string[]> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "BENCH_SINK", subjects: ["bench.>"] });
  const js = jetstream(nc);
  const N = 20_000;
  const body = JSON.stringify({
    id: "dashboard|svc-01/%2Froute%2F1|10000|1700000000000",
    seq: 3,
    kind: "early",
    pad: "x".repeat(400),
  });
  const bytes = new TextEncoder().encode(body);
  const jsRun = await timed(() => pipelined(N, (i) => js.publish("bench.js", body, { msgID: `js-${i}` })));
  const acks = new InboxAcks(nc);
  const acksRun = await timed(() =>
    pipelined(N, (i) => acks.publish("bench.acks", bytes, { msgID: `acks-${i}`, timeout: 30_000 })),
  );
  acks.close();
  const sink = new PaneSink(nc, { limits: { messages: 1024, bytes: MAX_IN_FLIGHT_BYTES } });
  const sinkRun = await timed(async () => {
    for (let i = 0; i < N; i++) {
      if (sink.saturated) await sink.room();
      sink.publish("bench.sink", body, `sink-${i}`);
    }
    await sink.flush();
  });
  sink.close();
  await nc.close();
  const rate = (r: { ms: number; cpuMs: number }): string =>
    `${Math.round(N / (r.ms / 1000)).toLocaleString("en-US")} msgs/s`;
  const cpu = (r: { cpuMs: number }): string => `${((r.cpuMs * 1000) / N).toFixed(1)} µs CPU per publish`;
  return [
    row(
      `pane sink: ${N} publishes with Nats-Msg-Id, acked (PaneSink: reply inbox, batched acks)`,
      rate(sinkRun),
      cpu(sinkRun),
    ),
    row(
      "  baseline: js.publish, 1024 promises in flight, same server",
      rate(jsRun),
      `${cpu(jsRun)}; sink is ${(jsRun.ms / sinkRun.ms).toFixed(1)}× faster`,
    ),
    row(
      "  InboxAcks (TM_PARTIALS, TM_EVENTS from ingest), 1024 promises in flight",
      rate(acksRun),
      `${cpu(acksRun)}; ${(jsRun.ms / acksRun.ms).toFixed(1)}× js.publish's rate, ${(jsRun.cpuMs / acksRun.cpuMs).toFixed(1)}× less CPU`,
    ),
  ];
}
