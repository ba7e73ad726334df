/**
 * `startEngine(config)`: the engine role (docs/operations.md, "Engine workers"). Connects to NATS,
 * makes sure the streams exist, restores the newest valid checkpoint (reporting corrupt newer
 * ones), starts a consumer per owned partition, serves /metrics and publishes `tm.status` every
 * second. `close()` stops reading and writes a final checkpoint.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { pino, type Logger } from "pino";
import { createCore, restoreCore, withSessions } from "../core/index.js";
import { isWithSessionsSnapshot } from "../core/session/index.js";
import type { CoreConfig, StreamCore } from "../core/types.js";
import { STREAM_EVENTS, SUBJECT_STATUS } from "../protocol.js";
import { CheckpointStore } from "./checkpoint-store.js";
import type { EngineConfig } from "./config.js";
import { EngineMetrics } from "./engine-metrics.js";
import { EngineWorker } from "./engine-worker.js";
import { MergeStallWatch, STALL_MS } from "./merge-stall.js";
import { RuntimeError } from "./errors.js";
import { buildStatusMessage } from "./status-message.js";
import { connectNats, ensureStream, eventsStreamSpec, lateStreamSpec, panesStreamSpec } from "../nats/index.js";

/** How the engine makes its core: fresh, or from snapshot bytes. */
export interface CoreFactory {
  create(config: CoreConfig): StreamCore;
  restore(config: CoreConfig, snapshot: Uint8Array): StreamCore;
}

export interface RunningEngine {
  readonly worker: string;
  readonly partitions: readonly number[];
  readonly metricsUrl: string;
  /** The checkpoint the engine resumed from, if any. */
  readonly restoredFrom: string | undefined;
  /** Corrupt checkpoint files skipped at start. */
  readonly skippedCheckpoints: ReadonlyArray<{ file: string; reason: string }>;
  readonly engine: EngineWorker;
  close(): Promise<void>;
}

export interface StartEngineOptions {
  /**
   * Defaults to the pure core (createCore / restoreCore), with session windows when
   * `config.sessions` is set (withSessions). A factory given here restores its own snapshots.
   */
  cores?: CoreFactory;
  logger?: Logger;
}

const PREFERRED_METRICS_PORT = 9464;

export async function startEngine(config: EngineConfig, opts: StartEngineOptions = {}): Promise<RunningEngine> {
  const cores =
    opts.cores ?? (config.sessions ? withSessions(config.sessions) : { create: createCore, restore: restoreCore });
  const log = opts.logger ?? pino({ name: "tidemark-engine", base: { worker: config.worker } }, pino.destination(2));
  const store = new CheckpointStore(config.checkpointDir, config.keepCheckpoints);
  await store.open();
  const loaded = await store.loadNewest();
  for (const s of loaded.skipped)
    log.error({ file: s.file, reason: s.reason }, "corrupt checkpoint skipped; using an older one");
  const cp = loaded.checkpoint;
  if (
    cp &&
    (cp.header.partitions.join(",") !== config.partitions.join(",") ||
      cp.header.partitionCount !== config.partitionCount)
  )
    throw new RuntimeError(
      "TM_CHECKPOINT_MISMATCH",
      `checkpoint ${loaded.file} belongs to partitions [${cp.header.partitions.join(",")}] of ${cp.header.partitionCount}, ` +
        `but this worker owns [${config.partitions.join(",")}] of ${config.partitionCount}; ` +
        `use the worker id and --partitions it was written with, or another --data directory`,
    );
  if (cp && opts.cores === undefined) checkSessionsMatch(cp.snapshot, loaded.file, config.sessions !== null);
  const core = cp ? cores.restore(config.core, cp.snapshot) : cores.create(config.core);
  if (cp)
    log.info({ file: loaded.file, logTime: cp.header.logTime, offsets: cp.header.offsets }, "restored checkpoint");

  const nc: NatsConnection = await connectNats(config.natsUrl, { maxReconnectAttempts: -1 });
  try {
    const jsm = await jetstreamManager(nc);
    for (const spec of [eventsStreamSpec(), panesStreamSpec(), lateStreamSpec()]) await ensureStream(jsm, spec);
    const first = (await jsm.streams.info(STREAM_EVENTS)).state.first_seq;
    const behind = (cp?.header.offsets ?? []).filter((o) => o.lastSeq > 0 && o.lastSeq + 1 < first);
    if (behind.length > 0)
      log.error(
        { firstSeq: first, resumeAt: behind.map((o) => o.lastSeq + 1) },
        "TM_EVENTS now starts past where this checkpoint resumes: messages of these partitions stored in between were removed by retention and are lost",
      );
  } catch (err) {
    await nc.close();
    throw err;
  }
  const worker = new EngineWorker(
    config,
    core,
    store,
    jetstream(nc),
    nc,
    log,
    cp?.header.offsets,
    cp?.header.logTime ?? null,
  );
  const metrics = new EngineMetrics(
    {
      eventsTotal: () => worker.eventsTotal,
      panesEmitted: () => worker.panesEmitted,
      status: () => core.status(),
      partitions: () => config.partitions,
      now: () => Date.now(),
    },
    { worker: config.worker },
  );
  metrics.checkpointsCorrupt.inc(loaded.skipped.length);
  worker.onCheckpoint = (e) => {
    metrics.checkpointWritten(e.totalMs / 1000, e.bytes);
    log.debug?.(e, "checkpoint written");
  };
  const port = config.metricsPort ?? (await preferred(config.metricsHost));
  const served = await metrics.serve(config.metricsHost, port);

  const stalls = new MergeStallWatch(config.partitions.length, Date.now());
  const publishStatus = (): void => {
    const laneTimes = config.partitions.map((_, lane) => worker.merge.laneTime(lane));
    const waitingFor = worker.merge.waitingFor();
    const stalled = worker.disconnected ? null : stalls.observe(waitingFor, laneTimes, Date.now());
    if (stalled !== null)
      log.warn(
        { partition: config.partitions[stalled], laneTime: laneTimes[stalled] },
        `partition ${config.partitions[stalled]} has sent nothing, not even a heartbeat, for ${STALL_MS / 1000} s and the merge waits for it: check that ingest runs and heartbeats every partition`,
      );
    const msg = buildStatusMessage({
      worker: config.worker,
      wallTime: Date.now(),
      core: core.status(),
      policies: config.core.policies,
      partitions: config.partitions,
      laneTimes,
      waitingFor,
      offsets: worker.merge.offsets(),
      lastCheckpointWall: worker.lastCheckpointWall,
      eventsTotal: worker.eventsTotal,
    });
    if (!nc.isClosed()) nc.publish(SUBJECT_STATUS, JSON.stringify(msg));
  };
  const statusTimer = setInterval(publishStatus, config.statusEveryMs);
  worker.start();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") {
        log.warn({ server: s.server }, "disconnected from NATS; the partitions wait for the reconnect");
        worker.connectionLost();
      } else if (s.type === "reconnect") {
        log.info({ server: s.server }, "reconnected to NATS; recreating the consumers");
        worker.connectionRestored();
        stalls.restart(Date.now());
      }
    }
  })();
  log.info({ partitions: config.partitions, metrics: served.port, nats: config.natsUrl }, "engine started");

  let closing: Promise<void> | undefined;
  return {
    worker: config.worker,
    partitions: config.partitions,
    metricsUrl: `http://${config.metricsHost}:${served.port}/metrics`,
    restoredFrom: loaded.file,
    skippedCheckpoints: loaded.skipped,
    engine: worker,
    close: () =>
      (closing ??= (async () => {
        clearInterval(statusTimer);
        await worker.close();
        publishStatus();
        // drain() waits for the server; with NATS down it would wait for ever.
        const drained = nc.drain().catch(() => undefined);
        await Promise.race([drained, new Promise((r) => setTimeout(r, 3_000).unref())]);
        if (!nc.isClosed()) await nc.close().catch(() => undefined);
        await new Promise<void>((r) => served.server.close(() => r()));
        log.info({ events: worker.eventsTotal }, "engine stopped");
        log.flush?.();
      })()),
  };
}

/** A checkpoint written with sessions on does not restore with them off, nor the other way round. */
function checkSessionsMatch(snapshot: Uint8Array, file: string | undefined, sessionsOn: boolean): void {
  const written = isWithSessionsSnapshot(snapshot);
  if (written === sessionsOn) return;
  const was = written ? "on" : "off";
  throw new RuntimeError(
    "TM_CHECKPOINT_MISMATCH",
    `checkpoint ${file} was written with session windows ${was}, but this engine runs with them ${sessionsOn ? "on" : "off"}; ` +
      `start with sessions ${was} again (--sessions ${written ? "on" : "off"}), or use a fresh --data directory`,
  );
}

async function preferred(host: string): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(0));
    srv.listen(PREFERRED_METRICS_PORT, host, () => srv.close(() => resolve(PREFERRED_METRICS_PORT)));
  });
}
