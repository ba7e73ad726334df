/**
 * What every role's `tm.status` publisher does alike (docs/operations.md, "Partition ownership",
 * "Merge stage"): publish the role's status every `statusEvery`, watch its partitions for stalls
 * (stall-watch.ts) and put held input in the log (hold-log.ts), restart the stall clocks on a
 * reconnect, and never crash the operator over a status that cannot go out. The role builds the
 * message (worker/worker-status.ts, merge/merge-status.ts).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { StreamCore } from "../../core/types.js";
import { SUBJECT_STATUS, type EngineStatusMessage } from "../../protocol.js";
import type { EngineConfig } from "../config/config.js";
import type { OperatorLog } from "../operator-log.js";
import { backpressureStatus } from "../status/backpressure-status.js";
import { HoldLog } from "../status/hold-log.js";
import { StallWatch } from "../status/stall-watch.js";
import { buildStatusMessage, type StatusInputs } from "../status/status-message.js";
import type { Operator } from "./operator.js";
import type { OperatorHost } from "./operator-host.js";
import type { RoleStatus } from "./role-lifecycle.js";

/** What the status takes of the role's config (EngineConfig, MergeConfig). */
export type StatusConfig = Pick<EngineConfig, "worker" | "partitions" | "statusEveryMs"> & {
  core: Pick<EngineConfig["core"], "policies">;
};

/** What the role's status says of its partitions, beside what every role's says. */
export type LaneStatus = Pick<StatusInputs, "laneTimes" | "waitingFor" | "offsets" | "lastCheckpointWall">;

export abstract class RoleStatusPublisher implements RoleStatus {
  protected readonly stalls: StallWatch;
  protected readonly holds: HoldLog;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly role: { config: StatusConfig; host: OperatorHost<Operator>; core: StreamCore },
    private readonly nc: NatsConnection,
    protected readonly log: OperatorLog,
    /** Which status the error line names ("engine", "merge"). */
    private readonly name: string,
  ) {
    this.stalls = new StallWatch(role.config.partitions.length, Date.now());
    this.holds = new HoldLog(role.host, log);
  }

  /** The message of every role: identity, core, counts, lag and backpressure around `lanes`. */
  protected statusOf(now: number, lanes: LaneStatus): EngineStatusMessage {
    const { config, host, core } = this.role;
    return buildStatusMessage({
      worker: config.worker,
      wallTime: now,
      core: core.status(),
      policies: config.core.policies,
      partitions: config.partitions,
      ...lanes,
      eventsTotal: host.eventsTotal,
      pipelineLag: host.pipelineLag.percentiles(now),
      backpressure: backpressureStatus(host),
    });
  }

  /** The status as it stands at `now`. */
  abstract message(now: number): EngineStatusMessage;

  start(): void {
    this.timer = setInterval(() => this.publish(), this.role.config.statusEveryMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Back on NATS: silence while disconnected was ours, not the partitions'. */
  reconnected(): void {
    this.stalls.restart(Date.now());
  }

  publish(): void {
    const msg = this.message(Date.now());
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(SUBJECT_STATUS, JSON.stringify(msg));
    } catch (err) {
      // A status is information, not state: one that cannot go out (e.g. over max_payload) is
      // logged and the next one tried, never a crash of the operator.
      this.log.error({ err: (err as Error).message }, `${this.name} status not published`);
    }
  }
}
