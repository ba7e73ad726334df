/**
 * Heartbeats (ADR 0002; docs/ingest.md, "What goes to NATS"): every interval, an empty message with
 * header `Tm-Heartbeat` = the instance's ingest_ts (ms) to every partition, so a quiet source still
 * advances log time and a silent partition is detectable. A round is skipped while NATS is down or
 * the previous round is still waiting for acks.
 */
import { headers } from "@nats-io/transport-node";
import { HEARTBEAT_HEADER, eventsSubject } from "@tidemark/engine/protocol";
import type { Logger } from "pino";
import type { IngestClock } from "../events/ingest-clock.js";
import type { IngestMetrics } from "../metrics.js";
import type { NatsLink } from "./nats-link.js";

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly link: NatsLink,
    private readonly clock: IngestClock,
    private readonly partitions: number,
    private readonly ackTimeoutMs: number,
    private readonly metrics: IngestMetrics,
    private readonly log: Logger,
  ) {}

  start(everyMs: number): void {
    this.beat();
    this.timer = setInterval(() => this.beat(), everyMs);
    this.timer.unref();
  }

  /** Publishes one round now (unless NATS is down or a round is in progress). */
  beat(): void {
    if (this.pending || !this.link.isConnected) return;
    const h = headers();
    h.set(HEARTBEAT_HEADER, String(this.clock.now()));
    const acks: Promise<unknown>[] = [];
    for (let p = 0; p < this.partitions; p++)
      acks.push(this.link.acks.publish(eventsSubject(p), undefined, { headers: h, timeout: this.ackTimeoutMs }));
    this.pending = Promise.all(acks)
      .then(
        () => undefined,
        (err: unknown) => {
          this.metrics.heartbeatFailures.inc();
          this.log.debug({ err }, "heartbeat round failed");
        },
      )
      .finally(() => (this.pending = undefined));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pending;
  }
}
