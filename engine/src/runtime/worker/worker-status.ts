/**
 * Publishes `tm.status` every `statusEvery` (docs/operations.md, "Partition ownership"): the
 * core's status with the interleave's view of the partitions (status-message.ts), and logs a partition
 * the interleave has waited on for long (stall-watch.ts). The timer, the reconnect and the publish
 * are every role's (host/role-status.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { StreamCore } from "../../core/types.js";
import type { EngineStatusMessage } from "../../protocol.js";
import type { EngineConfig } from "../config/config.js";
import type { EngineWorker } from "./engine-worker.js";
import type { OperatorHost } from "../host/operator-host.js";
import { RoleStatusPublisher } from "../host/role-status.js";
import { STALL_MS } from "../status/stall-watch.js";

export class StatusPublisher extends RoleStatusPublisher {
  constructor(
    private readonly config: EngineConfig,
    private readonly host: OperatorHost<EngineWorker>,
    core: StreamCore,
    nc: NatsConnection,
    log: Logger,
  ) {
    super({ config, host, core }, nc, log, "engine");
  }

  message(now: number): EngineStatusMessage {
    const { config, host } = this;
    const worker = host.operator;
    const laneTimes = config.partitions.map((_, lane) => worker.interleave.laneTime(lane));
    const waitingFor = worker.interleave.waitingFor();
    if (!host.disconnected) this.reportStall(this.stalls.observe(waitingFor, laneTimes, now));
    this.holds.observe(now);
    return this.statusOf(now, {
      laneTimes,
      waitingFor: this.stalls.holding(waitingFor, now),
      offsets: worker.interleave.offsets(),
      lastCheckpointWall: host.checkpoints.lastCheckpointWall,
    });
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
