/**
 * Punctuation (docs/ingest.md, "What goes to NATS"; docs/decisions/0012-batched-transport.md,
 * "Punctuation"): after a request's events are published, a heartbeat to every partition stamped
 * strictly after them, at most once per `everyMs`. The engine's merge releases an event only once
 * every other partition has shown a later time (the total order breaks ties on the partition, so
 * an equal time is not enough), and without punctuation that time comes with the next 1 s
 * heartbeat: punctuation bounds the wait by `everyMs` instead. A round due sooner than `everyMs`
 * after the last is sent when that time comes, once, for every request in between. Nothing is
 * sent while no request comes: the 1 s heartbeats (heartbeat.ts) keep quiet partitions moving.
 */
import { headers } from "@nats-io/transport-node";
import { HEARTBEAT_HEADER, eventsSubject } from "@tidemark/engine/protocol";
import type { Logger } from "pino";
import type { IngestClock } from "../events/ingest-clock.js";
import type { IngestMetrics } from "../metrics.js";
import type { NatsLink } from "./nats-link.js";

export class Punctuation {
  private lastRound = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly link: NatsLink,
    private readonly clock: IngestClock,
    private readonly partitions: number,
    /** Least wall-clock time between two rounds; 0 turns punctuation off. */
    private readonly everyMs: number,
    private readonly ackTimeoutMs: number,
    private readonly metrics: IngestMetrics,
    private readonly log: Logger,
    private readonly wall: () => number = Date.now,
  ) {}

  /** A request's events have just been published (in the same synchronous step): punctuate them. */
  published(): void {
    if (this.everyMs <= 0 || this.timer) return;
    const wait = this.lastRound + this.everyMs - this.wall();
    if (wait <= 0) this.round();
    else
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.round();
      }, wait).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private round(): void {
    this.lastRound = this.wall();
    if (!this.link.isConnected) return;
    const h = headers();
    // Strictly after every ingest_ts stamped so far, the punctuated events' included.
    h.set(HEARTBEAT_HEADER, String(this.clock.next()));
    for (let p = 0; p < this.partitions; p++)
      this.link.acks
        .publish(eventsSubject(p), undefined, { headers: h, timeout: this.ackTimeoutMs })
        .catch((err: unknown) => {
          this.metrics.heartbeatFailures.inc();
          this.log.debug({ err }, "punctuation heartbeat failed");
        });
  }
}
