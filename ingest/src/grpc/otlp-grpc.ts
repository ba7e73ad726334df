/**
 * OTLP/gRPC (docs/ingest.md, "OTLP/gRPC"; docs/decisions/0041-otlp-grpc-and-logs.md):
 * `TraceService/Export` and `LogsService/Export` on grpc-js, through the same write pipeline as
 * OTLP/HTTP. grpc-js reads the message (gzip included, `grpc.max_receive_message_length` =
 * maxBodyBytes after decompression: RESOURCE_EXHAUSTED past it); the bearer token comes from the
 * `authorization` metadata, the request id from `idempotency-key` / `x-request-id`; a call whose
 * deadline passed before publishing stores nothing (DEADLINE_EXCEEDED). Retryable failures
 * (UNAVAILABLE, RESOURCE_EXHAUSTED) carry google.rpc.RetryInfo in grpc-status-details-bin.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { IngestConfig } from "../config.js";
import { IngestError } from "../errors.js";
import { tlsFiles } from "../http/tls-options.js";
import { bufferedWrite, type WritePipeline } from "../http/write-pipeline.js";
import { countOtlp, type IngestMetrics } from "../metrics.js";
import { grpcCodeOf, otlpResponse, retryStatus } from "../otlp/otlp-response.js";
import { LOGS, TRACES, rejectionMessage, type OtlpSignal } from "../otlp/otlp-signal.js";

/** In-flight calls get this long to finish on close() before they are cut. */
const CLOSE_GRACE_MS = 10_000;

export interface GrpcServer {
  /** host:port it listens on. */
  readonly address: string;
  close(): Promise<void>;
}

export interface GrpcDeps {
  readonly config: IngestConfig;
  readonly pipeline: WritePipeline;
  readonly metrics: IngestMetrics;
  readonly log: Logger;
}

const raw = (b: Buffer): Buffer => b;

function serviceOf(signal: OtlpSignal): grpc.ServiceDefinition {
  return {
    Export: {
      path: signal.grpcPath,
      requestStream: false,
      responseStream: false,
      requestSerialize: raw,
      requestDeserialize: raw,
      responseSerialize: raw,
      responseDeserialize: raw,
    },
  };
}

/** Metadata as headers: the first value of each text key. */
function headersOf(metadata: grpc.Metadata): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(metadata.getMap())) if (typeof value === "string") out[key] = value;
  return out;
}

function deadlineMs(call: grpc.ServerUnaryCall<Buffer, Buffer>): number {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : d;
}

function expired(call: grpc.ServerUnaryCall<Buffer, Buffer>): () => void {
  return () => {
    if (call.cancelled || Date.now() >= deadlineMs(call))
      throw new IngestError(
        "TM_INGEST_DEADLINE_EXCEEDED",
        "the call's deadline passed before its records were published: nothing was stored; send it again with a longer deadline",
      );
  };
}

function statusOf(err: unknown, retryAfterS: number, log: Logger): Partial<grpc.StatusObject> {
  if (!(err instanceof IngestError)) {
    log.error({ err }, "gRPC export failed");
    return { code: grpc.status.INTERNAL, details: "internal error: the ingest log has the details" };
  }
  const code = grpcCodeOf(err.status);
  const details = `${err.code}: ${err.message}`;
  const metadata = new grpc.Metadata();
  if (err.retryable) metadata.set("grpc-status-details-bin", Buffer.from(retryStatus(code, details, retryAfterS)));
  return { code, details, metadata };
}

function exportHandler(signal: OtlpSignal, deps: GrpcDeps): grpc.handleUnaryCall<Buffer, Buffer> {
  const { config, pipeline, metrics, log } = deps;
  return (call, callback) => {
    const end = metrics.grpcCalls.startTimer({ method: signal.name });
    void (async () => {
      const auth = call.metadata.get("authorization")[0];
      const identity = pipeline.authorize(typeof auth === "string" ? auth : undefined);
      const write = bufferedWrite(headersOf(call.metadata), call.request, expired(call));
      return pipeline.run(write, identity, { kind: signal.name, format: "protobuf" });
    })().then(
      ({ batch, skipped }) => {
        countOtlp(metrics, signal.name, batch, skipped);
        end({ code: String(grpc.status.OK) });
        callback(null, Buffer.from(otlpResponse(signal, batch.rejected, rejectionMessage(signal, { batch, skipped }))));
      },
      (err: unknown) => {
        const status = statusOf(err, config.retryAfterS, log);
        end({ code: String(status.code) });
        callback(status);
      },
    );
  };
}

function credentials(config: IngestConfig): grpc.ServerCredentials {
  const tls = tlsFiles(config);
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false);
}

/** Serves OTLP/gRPC on config.host:config.grpcPort (a free port when 0); config.grpcPort must not be null. */
export async function startGrpc(deps: GrpcDeps): Promise<GrpcServer> {
  const { config } = deps;
  const server = new grpc.Server({ "grpc.max_receive_message_length": config.maxBodyBytes });
  server.addService(serviceOf(TRACES), { Export: exportHandler(TRACES, deps) });
  server.addService(serviceOf(LOGS), { Export: exportHandler(LOGS, deps) });
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${config.grpcPort ?? 0}`, credentials(config), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), CLOSE_GRACE_MS).unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
