/**
 * Writes TM_EVENTS as ingest does (docs/ingest.md, "What goes to NATS": NDJSON batches per
 * partition and empty `Tm-Heartbeat` messages) but on a log clock the test drives: every message
 * carries the ingest_ts the test chose, so the engine's log time moves exactly as far as the test
 * says, whatever the wall clock does meanwhile (a nats-server restart, a held-back ack). Message ids
 * are fixed by partition and time, so a publish retried across an outage is stored once.
 */
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import {
  HEARTBEAT_HEADER,
  encodeEventBatch,
  eventsSubject,
  partitionOf,
  type TelemetryEvent,
} from "@tidemark/engine/protocol";

export class LogFeed {
  /** One service per partition, named so that ingest would route it there. */
  readonly services: string[];
  /** Events published so far. */
  sent = 0;

  constructor(
    private readonly nc: () => NatsConnection,
    readonly partitions: number,
    prefix = "svc",
  ) {
    this.services = Array.from({ length: partitions }, (_, p) => serviceOn(p, partitions, prefix));
  }

  /** `perPartition` events on every partition, all with ingest_ts `t` and ts a little before it. */
  async events(t: number, perPartition: number): Promise<void> {
    await Promise.all(
      this.services.map((service, p) => {
        const batch: TelemetryEvent[] = Array.from({ length: perPartition }, (_, i) => ({
          ts: t - ((i * 373 + p * 97) % 1500),
          ingest_ts: t,
          service,
          route: `/r${i % 2}`,
          status: (i + p) % 7 === 0 ? 503 : 200,
          latency_ms: 5 + ((i * 31) % 200),
          user: `u${i % 5}`,
        }));
        this.sent += batch.length;
        return this.publish(p, encodeEventBatch(batch), `feed:${p}:${t}:e`, undefined);
      }),
    );
  }

  /**
   * The test's own events, each on its service's partition, one batch per partition; all must
   * carry ingest_ts `t` (the log clock the test drives). `tag` keeps their message ids apart.
   */
  async put(t: number, events: readonly TelemetryEvent[], tag: string): Promise<void> {
    const byPartition = new Map<number, TelemetryEvent[]>();
    for (const e of events) {
      if (e.ingest_ts !== t) throw new Error(`LogFeed.put at ${t}: an event has ingest_ts ${e.ingest_ts}`);
      const p = partitionOf(e.service, this.partitions);
      (byPartition.get(p) ?? byPartition.set(p, []).get(p)!).push(e);
    }
    this.sent += events.length;
    await Promise.all(
      [...byPartition].map(([p, batch]) =>
        this.publish(p, encodeEventBatch(batch), `feed:${p}:${t}:${tag}`, undefined),
      ),
    );
  }

  /** A heartbeat at `t` on every partition. */
  async heartbeat(t: number): Promise<void> {
    await Promise.all(this.services.map((_, p) => this.publish(p, "", `feed:${p}:${t}:hb`, String(t))));
  }

  /** Publishes until the stream acknowledges it (same message id on every try). */
  private async publish(partition: number, body: string, msgID: string, heartbeat: string | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const h = headers();
      if (heartbeat !== undefined) h.set(HEARTBEAT_HEADER, heartbeat);
      try {
        await jetstream(this.nc()).publish(eventsSubject(partition), body, { msgID, headers: h, timeout: 2000 });
        return;
      } catch (err) {
        if (attempt >= 60) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}

function serviceOn(partition: number, partitions: number, prefix: string): string {
  for (let k = 0; ; k++) if (partitionOf(`${prefix}-${k}`, partitions) === partition) return `${prefix}-${k}`;
}
