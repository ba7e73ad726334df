/**
 * A raw grpc-js client for ingest's OTLP/gRPC port: unary calls with bytes in and out, and the
 * google.rpc.RetryInfo delay of a status's details, read off the wire by hand (independent of
 * ingest's protobuf schema).
 */
import { Client, Metadata, credentials, type ServiceError } from "@grpc/grpc-js";
import { TOKEN } from "../ingest/ingest-fixture.js";

export const TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
export const LOGS_EXPORT = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

export interface CallResult {
  err: ServiceError | null;
  res: Buffer | undefined;
}

export interface CallOptions {
  /** The bearer token; null: none sent. */
  token?: string | null;
  /** ms since epoch. */
  deadline?: number;
}

const raw = (b: Buffer): Buffer => b;

const open = new Set<Client>();

/** Closes every client grpcClient() made (their channels would keep the test process alive). */
export function closeClients(): void {
  for (const c of open) c.close();
  open.clear();
}

/** A client to `address`; `gzip` compresses every message. Close with closeClients(). */
export function grpcClient(address: string, gzip = false): Client {
  const client = new Client(address, credentials.createInsecure(), {
    "grpc.max_send_message_length": -1,
    ...(gzip ? { "grpc.default_compression_algorithm": 2 } : {}),
  });
  open.add(client);
  return client;
}

export function unary(client: Client, path: string, body: Uint8Array, opts: CallOptions = {}): Promise<CallResult> {
  const metadata = new Metadata();
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) metadata.set("authorization", `Bearer ${token}`);
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      path,
      raw,
      raw,
      Buffer.from(body),
      metadata,
      { deadline: opts.deadline ?? Infinity },
      (err, res) => resolve({ err, res }),
    ),
  );
}

/** Length-delimited and varint fields of a protobuf message, by field number. */
function fields(buf: Buffer): Map<number, (number | Buffer)[]> {
  const out = new Map<number, (number | Buffer)[]>();
  let at = 0;
  const varint = (): number => {
    let v = 0;
    for (let scale = 1; ; scale *= 128) {
      if (at >= buf.length) throw new Error("truncated varint in grpc-status-details-bin");
      const b = buf[at++]!;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
    }
  };
  while (at < buf.length) {
    const tag = varint();
    let value: number | Buffer = varint();
    if (tag % 8 === 2) {
      const from = at;
      at += value;
      value = buf.subarray(from, at);
    }
    out.set(Math.floor(tag / 8), [...(out.get(Math.floor(tag / 8)) ?? []), value]);
  }
  return out;
}

/** The RetryInfo delay (s) in a failed call's grpc-status-details-bin, or undefined when there is none. */
export function retryDelayS(err: ServiceError): number | undefined {
  const bin = err.metadata?.get("grpc-status-details-bin")[0];
  if (!(bin instanceof Buffer)) return undefined;
  for (const any of fields(bin).get(3) ?? []) {
    const f = fields(any as Buffer);
    if (String(f.get(1)?.[0]) !== "type.googleapis.com/google.rpc.RetryInfo") continue;
    const duration = fields(f.get(2)?.[0] as Buffer).get(1)?.[0] as Buffer;
    return Number(fields(duration).get(1)?.[0] ?? 0);
  }
  return undefined;
}
