/** Reads a whole stream back through an ordered consumer: every message with its Nats-Msg-Id. */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

export interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: string;
}

export async function readStream(nc: NatsConnection, stream: string): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(nc);
  const total = (await jsm.streams.info(stream)).state.messages;
  const out: StoredMessage[] = [];
  if (total === 0) return out;
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume();
  for await (const m of messages) {
    out.push({ seq: m.seq, subject: m.subject, msgId: m.headers?.get("Nats-Msg-Id") || undefined, body: m.string() });
    if (out.length >= total) break;
  }
  return out;
}
