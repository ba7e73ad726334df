/**
 * Test fixture for the ingest tests: a real nats-server, an in-process ingest on a free port,
 * and a reader that returns everything in TM_EVENTS (events with their partition, heartbeats).
 */
import { createHash } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { HEARTBEAT_HEADER, STREAM_EVENTS, decodeEventBatch, type TelemetryEvent } from "@tidemark/engine/protocol";
import { defineIngestConfig, startIngest, type IngestConfigInput, type IngestServer } from "@tidemark/ingest";
import { startTestNats, type TestNats } from "../index.js";

export const TOKEN = "test-token-0123456789";

/**
 * The start of a request's message ids as docs/security.md ("Idempotency") specifies them:
 * `<request id>:<token identity>:<body hash>`, the identity the first 16 hex digits of the
 * token's SHA-256, the hash the first 22 base64url characters of the body's (decoded) SHA-256.
 */
export function messageKey(requestId: string, body: string | Uint8Array, token: string | null = TOKEN): string {
  const identity = token === null ? "open" : createHash("sha256").update(token).digest("hex").slice(0, 16);
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 22);
  return `${requestId}:${identity}:${hash}`;
}

export interface StoredEvent extends TelemetryEvent {
  partition: number;
  msgId: string | undefined;
}

export interface StreamContents {
  events: StoredEvent[];
  heartbeats: { partition: number; ts: number }[];
  /** Per message in stream order: its partition and largest ingest_ts (heartbeat: its header). */
  log: { partition: number; ingestTs: number }[];
  messages: number;
}

export interface IngestFixture {
  nats: TestNats;
  ingest: IngestServer;
  nc: NatsConnection;
  /** POST with the bearer token; `headers` add to / override the defaults. */
  post(
    path: string,
    body: string | Uint8Array,
    contentType: string,
    headers?: Record<string, string>,
  ): Promise<Response>;
  readStream(): Promise<StreamContents>;
  close(): Promise<void>;
}

export async function startIngestFixture(overrides: IngestConfigInput = {}): Promise<IngestFixture> {
  const nats = await startTestNats();
  const config = defineIngestConfig({ port: 0, natsUrl: nats.url, tokens: [TOKEN], logLevel: "silent", ...overrides });
  const ingest = await startIngest(config);
  const nc = await connect({ servers: nats.url, noAsyncTraces: true });
  return {
    nats,
    ingest,
    nc,
    post: (path, body, contentType, headers = {}) =>
      fetch(ingest.url + path, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": contentType, ...headers },
      }),
    readStream: () => readEventsStream(nc),
    close: async () => {
      await ingest.close();
      await nc.close();
      await nats.stop();
    },
  };
}

/** A POST whose body is pushed piece by piece (`push()` with no chunk ends it). */
export function streamingPost(
  url: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): { push: (chunk?: Uint8Array) => void; response: Promise<Response> } {
  let push: (chunk?: Uint8Array) => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (push = (chunk) => (chunk ? c.enqueue(chunk) : c.close())),
  });
  const response = fetch(url, { method: "POST", body, duplex: "half", headers, signal } as RequestInit);
  return { push: (chunk) => push(chunk), response };
}

/** The ingest's `tidemark_ingest_in_flight_bytes` gauge, read from /metrics. */
export async function inFlightBytes(ingestUrl: string): Promise<number> {
  const text = await (await fetch(`${ingestUrl}/metrics`)).text();
  return Number(/tidemark_ingest_in_flight_bytes (\d+)/.exec(text)?.[1]);
}

/** Every message of TM_EVENTS, in stream order, through an ordered consumer. */
export async function readEventsStream(nc: NatsConnection): Promise<StreamContents> {
  const jsm = await jetstreamManager(nc);
  const last = (await jsm.streams.info(STREAM_EVENTS)).state.last_seq;
  const out: StreamContents = { events: [], heartbeats: [], log: [], messages: 0 };
  if (last === 0) return out;
  const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS);
  const messages = await consumer.consume();
  for await (const m of messages) {
    out.messages++;
    const partition = Number(m.subject.split(".").at(-1));
    const hb = m.headers?.get(HEARTBEAT_HEADER);
    if (hb) {
      out.heartbeats.push({ partition, ts: Number(hb) });
      out.log.push({ partition, ingestTs: Number(hb) });
    } else {
      const batch = decodeEventBatch(m.string());
      for (const e of batch) out.events.push({ ...e, partition, msgId: m.headers?.get("Nats-Msg-Id") });
      out.log.push({ partition, ingestTs: Math.max(...batch.map((e) => e.ingest_ts)) });
    }
    if (m.seq >= last) break;
  }
  return out;
}
