/**
 * Reads a whole stream back, message by message (STREAM.MSG.GET by sequence, answered by the
 * stream leader), with each message's Nats-Msg-Id. Used after a node crash, where creating a
 * consumer can wait on the dead peer; a get is retried until the stream answers. The manager
 * skips its API check (an account-info request that times out, unretried, while a new leader is
 * being elected — seen as a flaky TimeoutError in CI).
 */
import { jetstreamManager, type JetStreamManager, type StoredMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

export interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: string;
  /** The body's bytes (a TM_PANES body may be gzip). */
  data: Uint8Array;
}

export async function readStream(nc: NatsConnection, stream: string, parallel = 32): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(nc, { timeout: 5000, checkAPI: false });
  const { first_seq: first, last_seq: last, messages } = (await retry(() => jsm.streams.info(stream))).state;
  const out: StoredMessage[] = [];
  if (messages === 0) return out;
  for (let from = first; from <= last; from += parallel) {
    const seqs = Array.from({ length: Math.min(parallel, last - from + 1) }, (_, i) => from + i);
    const got = await Promise.all(seqs.map((seq) => retry(() => get(jsm, stream, seq))));
    for (const m of got) {
      if (m)
        out.push({
          seq: m.seq,
          subject: m.subject,
          msgId: m.header.get("Nats-Msg-Id") || undefined,
          body: m.string(),
          data: m.data,
        });
    }
  }
  return out;
}

async function get(jsm: JetStreamManager, stream: string, seq: number): Promise<StoredMsg | null> {
  return jsm.streams.getMessage(stream, { seq });
}

async function retry<T>(op: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await op();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
