/**
 * Publishes `tm.status` every `statusEvery` (docs/operations.md, "Partition ownership"): the
 * core's status with the interleave's view of the partitions (status-message.ts), and logs a partition
 * the interleave has waited on for long (stall-watch.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { StreamCore } from "../../core/types.js";
import { SUBJECT_STATUS } from "../../protocol.js";
import type { EngineConfig } from "../config/config.js";
import { backpressureStatus } from "../status/backpressure-status.js";
import type { EngineWorker } from "./engine-worker.js";
import type { OperatorHost } from "../host/operator-host.js";
import { HoldLog } from "../status/hold-log.js";
import { StallWatch, STALL_MS } from "../status/stall-watch.js";
import { buildStatusMessage } from "../status/status-message.js";

export class StatusPublisher {
  private readonly stalls: StallWatch;
  private readonly holds: HoldLog;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: EngineConfig,
    private readonly host: OperatorHost<EngineWorker>,
    private readonly core: StreamCore,
    private readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {
    this.stalls = new StallWatch(config.partitions.length, Date.now());
    this.holds = new HoldLog(host, log);
  }

  start(): void {
    this.timer = setInterval(() => this.publish(), this.config.statusEveryMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Back on NATS: silence while disconnected was ours, not the partitions'. */
  reconnected(): void {
    this.stalls.restart(Date.now());
  }

  publish(): void {
    const { config, host } = this;
    const worker = host.operator;
    const laneTimes = config.partitions.map((_, lane) => worker.interleave.laneTime(lane));
    const waitingFor = worker.interleave.waitingFor();
    const now = Date.now();
    if (!host.disconnected) this.reportStall(this.stalls.observe(waitingFor, laneTimes, now));
    this.holds.observe(now);
    const msg = buildStatusMessage({
      worker: config.worker,
      wallTime: Date.now(),
      core: this.core.status(),
      policies: config.core.policies,
      partitions: config.partitions,
      laneTimes,
      waitingFor: this.stalls.holding(waitingFor, now),
      offsets: worker.interleave.offsets(),
      lastCheckpointWall: worker.checkpoints.lastCheckpointWall,
      eventsTotal: host.eventsTotal,
      pipelineLag: host.pipelineLag.percentiles(Date.now()),
      backpressure: backpressureStatus(host),
    });
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(SUBJECT_STATUS, JSON.stringify(msg));
    } catch (err) {
      // A status is information, not state: one that cannot go out (e.g. over max_payload) is
      // logged and the next one tried, never a crash of the worker.
      this.log.error({ err: (err as Error).message }, "engine status not published");
    }
  }

  private reportStall(lane: number | null): void {
    if (lane === null) return;
    const partition = this.config.partitions[lane];
    this.log.warn(
      { partition, laneTime: this.host.operator.interleave.laneTime(lane) },
      `partition ${partition} has sent nothing, not even a heartbeat, for ${STALL_MS / 1000} s and the interleave waits for it: ` +
        `check that ingest runs and heartbeats every partition`,
    );
  }
}
