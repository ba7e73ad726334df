/**
 * The `tidemark remote-write` role (docs/remote-write.md): TM_PANES → each policy's settled panes →
 * samples → a Prometheus remote-write receiver. Wires the pure parts (settle rule, samples, queue,
 * retry policy) to the adapters (durable consumer, HTTP sender, snapshot file, /metrics).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { natsConnectOptions, redactUrl } from "@tidemark/engine/nats";
import { pino, type Logger } from "pino";
import { postWriteRequest } from "./http-sender.js";
import { NewestFile } from "./newest-file.js";
import { PaneReader, type PaneMessage } from "./pane-reader.js";
import type { RemoteWriteConfig } from "./remote-write-config.js";
import { remoteWriteMetrics, type RemoteWriteMetrics } from "./remote-write-metrics.js";
import { SettleRule } from "./settle-rule.js";
import { settledSamples, type OutSample } from "./settled-samples.js";
import { WriteLoop } from "./write-loop.js";
import { WriteQueue } from "./write-queue.js";

export interface RemoteWriteRole {
  readonly metricsUrl: string;
  readonly consumer: string;
  close(): Promise<void>;
}

const RETRY_MS = 1000;

export async function startRemoteWrite(config: RemoteWriteConfig, logger?: Logger): Promise<RemoteWriteRole> {
  const log = logger ?? pino({ name: "tidemark-remote-write", level: config.logLevel }, pino.destination(2));
  const metrics = remoteWriteMetrics(config.queueCapacity);
  const file = new NewestFile(config.dataDir, config.consumer);
  const queue = new WriteQueue(file.load(config.maxSeries), config.queueCapacity);
  const rule = new SettleRule(config.policies);
  const server = await serveMetrics(config, metrics, queue);
  const nc = await connectNats(config, log);
  const reader = new PaneReader(
    nc,
    {
      consumer: config.consumer,
      ackWaitMs: config.ackWaitMs,
      maxAckPending: Math.max(1000, Math.ceil(config.queueCapacity / 10)),
      retryMs: RETRY_MS,
    },
    log,
  );
  const loop = new WriteLoop({
    queue,
    batchSize: config.batchSize,
    backoff: { minMs: config.minBackoffMs, maxMs: config.maxBackoffMs },
    send: (body) => postWriteRequest(config.url, body, config),
    save: () => file.save(queue.accepted),
    ack: (seqs) => reader.ack(seqs),
    metrics,
    log,
  });
  const warned = new Set<string>();
  const take = async (m: PaneMessage): Promise<void> => {
    offer(m, { queue, rule, metrics, log, warned });
    reader.ack(queue.takeDone());
    loop.wake();
    await loop.space();
  };
  const running = [loop.run(), reader.run(take)];
  log.info(
    { url: config.url, consumer: config.consumer, settles: rule.describe(), seriesRemembered: queue.accepted.size },
    "remote-write started",
  );
  return {
    metricsUrl: `http://${config.host}:${(server.address() as AddressInfo).port}/metrics`,
    consumer: config.consumer,
    async close() {
      reader.close();
      loop.stop();
      await Promise.race([Promise.allSettled(running), new Promise((r) => setTimeout(r, 5000))]);
      await nc.close().catch(() => undefined);
      await new Promise((r) => server.close(r));
      log.info({ pending: queue.pending }, "remote-write stopped (pending samples are read again on the next start)");
    },
  };
}

interface OfferDeps {
  readonly queue: WriteQueue;
  readonly rule: SettleRule;
  readonly metrics: RemoteWriteMetrics;
  readonly log: Logger;
  readonly warned: Set<string>;
}

/** One TM_PANES message into the queue: the samples of its settled panes. */
function offer(m: PaneMessage, d: OfferDeps): void {
  const samples: OutSample[] = [];
  for (const pane of m.panes) {
    const verdict = d.rule.verdict(pane);
    d.metrics.panes.inc({ verdict });
    if (verdict === "settled") samples.push(...settledSamples(pane));
    else if ((verdict === "unknown-policy" || verdict === "discarding") && !d.warned.has(pane.policy)) {
      d.warned.add(pane.policy);
      d.log.warn(
        { policy: pane.policy, verdict },
        verdict === "discarding"
          ? "a discarding policy's panes carry deltas: not written (docs/remote-write.md)"
          : "panes of a policy the config does not name: not written; give the role the engine's config file",
      );
    }
  }
  const r = d.queue.offer(m.seq, samples);
  if (r.resent > 0) d.metrics.resentSkipped.inc(r.resent);
  if (r.dropped.length > 0) {
    d.metrics.samples.inc({ outcome: "dropped" }, r.dropped.length);
    const first = r.dropped[0] as OutSample & { reason: string };
    d.log.warn(
      { seq: m.seq, dropped: r.dropped.length, reason: first.reason, series: first.series, ts: first.ts },
      "settled samples older than (or revising) one already written for their series: not written",
    );
  }
  const newest = samples.reduce((x, s) => Math.max(x, s.ts), 0);
  if (newest > 0) d.metrics.highestRead.set(Math.max(newest / 1000, 0));
}

async function serveMetrics(
  config: RemoteWriteConfig,
  metrics: RemoteWriteMetrics,
  queue: WriteQueue,
): Promise<Server> {
  let forgottenSeen = 0;
  const server = createServer((req, res) => {
    if (req.url === "/metrics") {
      metrics.pending.set(queue.pending);
      metrics.series.set(queue.accepted.size);
      if (queue.accepted.forgotten > forgottenSeen)
        metrics.seriesForgotten.inc(queue.accepted.forgotten - forgottenSeen);
      forgottenSeen = queue.accepted.forgotten;
      void metrics.registry.metrics().then((body) => {
        res.writeHead(200, { "content-type": metrics.registry.contentType });
        res.end(body);
      });
    } else if (req.url === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else res.writeHead(404, { "content-type": "text/plain" }).end("not found: /metrics, /healthz\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.metricsPort, config.host, resolve);
  });
  return server;
}

/** Connects, retrying until NATS answers (then the client reconnects by itself). */
async function connectNats(config: RemoteWriteConfig, log: Logger): Promise<NatsConnection> {
  for (;;) {
    try {
      return await connect({
        ...natsConnectOptions(config.nats),
        noAsyncTraces: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: RETRY_MS,
      });
    } catch (err) {
      log.warn({ nats: redactUrl(config.nats), err: (err as Error).message }, "cannot reach NATS; retrying");
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}
