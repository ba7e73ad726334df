/**
 * Many events straight into TM_EVENTS, as ingest would write them (docs/ingest.md, "What goes to
 * NATS"): batches per partition, flushed every `every` events with a heartbeat on each partition
 * at the last event's time, then heartbeats at each of `ends` so the engine's log time moves past
 * every horizon. Message ids are fixed by the prefix and position, so a retry is stored once.
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

export async function publishBulk(
  nc: NatsConnection,
  events: Iterable<TelemetryEvent>,
  opts: { partitions: number; idPrefix: string; ends: readonly number[]; every?: number },
): Promise<void> {
  const js = jetstream(nc);
  const { partitions, idPrefix } = opts;
  const every = opts.every ?? 4000;
  const batches: TelemetryEvent[][] = Array.from({ length: partitions }, () => []);
  let n = 0;
  let i = 0;
  const flush = async (p: number): Promise<void> => {
    const batch = batches[p] as TelemetryEvent[];
    if (batch.length === 0) return;
    batches[p] = [];
    await js.publish(eventsSubject(p), encodeEventBatch(batch), { msgID: `${idPrefix}-${p}-${n++}` });
  };
  for (const e of events) {
    (batches[partitionOf(e.service, partitions)] as TelemetryEvent[]).push(e);
    if (++i % every === 0) {
      await Promise.all(batches.map((_, q) => flush(q)));
      await heartbeats(nc, e.ingest_ts, partitions, idPrefix);
    }
  }
  for (let p = 0; p < partitions; p++) await flush(p);
  for (const t of opts.ends) await heartbeats(nc, t, partitions, idPrefix);
}

/** An empty `Tm-Heartbeat` message at log time `t` on every partition. */
export async function heartbeats(nc: NatsConnection, t: number, partitions: number, idPrefix: string): Promise<void> {
  const js = jetstream(nc);
  for (let p = 0; p < partitions; p++) {
    const h = headers();
    h.set(HEARTBEAT_HEADER, String(t));
    await js.publish(eventsSubject(p), "", { headers: h, msgID: `${idPrefix}-hb-${p}-${t}` });
  }
}
