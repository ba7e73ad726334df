import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/**
 * `tidemark ingest`: the HTTP ingest role (docs/ingest.md). Config: defaults < the `ingest` section
 * and top-level `partitionCount` of --config FILE < TIDEMARK_* env (TIDEMARK_INGEST_TOKENS,
 * TIDEMARK_NATS_URL, TIDEMARK_PARTITION_COUNT) < flags. Prints `tidemark ready {"ingest": URL, "grpc": "host:port"}`
 * (grpc null when --grpc-port 0 turns OTLP/gRPC off) once listening and
 * connected to NATS; on SIGTERM/SIGINT it stops accepting, finishes in-flight requests (acks
 * included) and exits 0.
 */
export const ingest: Command = {
  summary: "HTTP and gRPC ingest: NDJSON/JSON events, OTLP traces and logs into JetStream TM_EVENTS",
  usage:
    "tidemark ingest [--port 4318] [--grpc-port 4317 (0: off)] [--host 127.0.0.1] [--nats URL] [--config FILE] [--partition-count 8]\n" +
    "                [--partition-by service|service+route] [--log-level info] [--tokens-file FILE]\n" +
    "                [--tls-cert FILE --tls-key FILE] [--token-rate 1000] [--token-concurrency 64]\n" +
    "                [--body-idle-timeout 10s] [--request-timeout 2m] [--headers-timeout 10s]\n" +
    "                [--max-idempotency-keys 100000] [--parse-workers 2] [--max-queued-parses 16]\n" +
    "                [--parse-offload-bytes 65536]\n" +
    "  tokens: TIDEMARK_INGEST_TOKENS, TIDEMARK_INGEST_TOKENS_FILE or --tokens-file (docs/security.md)",
  async run(flags: Flags): Promise<number> {
    const { loadIngestConfig, startIngest } = await import("@tidemark/ingest");
    // "partitions" is passed on so that the count's old flag is refused, naming the new one.
    const names = [
      "port",
      "grpc-port",
      "host",
      "nats",
      "partition-count",
      "partition-by",
      "partitions",
      "config",
      "log-level",
      "tokens-file",
      "tls-cert",
      "tls-key",
      "token-rate",
      "token-concurrency",
      "body-idle-timeout",
      "request-timeout",
      "headers-timeout",
      "max-idempotency-keys",
      "parse-workers",
      "max-queued-parses",
      "parse-offload-bytes",
    ];
    const config = loadIngestConfig({
      flags: Object.fromEntries(names.map((n) => [n, flags.get(n)])),
      env: process.env,
    });
    const stop = stopRequested();
    const server = await startIngest(config);
    process.stdout.write(readyLine({ ingest: server.url, grpc: server.grpcAddress }) + "\n");
    await stop;
    await server.close();
    return 0;
  },
};
