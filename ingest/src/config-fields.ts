/**
 * The value readers of the ingest configuration (config.ts), from the shared layered reader
 * (`@tidemark/engine/config`, docs/decisions/0046-layered-config.md): each error names the field,
 * where its value came from, and what to write instead, as TM_INGEST_CONFIG.
 */
import {
  ConfigFieldError,
  duration,
  integer,
  optionalPath,
  SECRET_VALUE,
  text,
  url,
  type FieldReader,
  type SettingSource,
} from "@tidemark/engine/config";
import type { IngestConfig } from "./config.js";
import { IngestError } from "./errors.js";

export function fail(field: string, message: string): never {
  throw new IngestError("TM_INGEST_CONFIG", `config ${field}: ${message}`);
}

export const parseTokens: FieldReader<string[]> = (raw, field, source) => {
  const list =
    typeof raw === "string"
      ? raw
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== "")
      : raw;
  if (!Array.isArray(list) || list.some((t) => typeof t !== "string" || !/^[\x21-\x7e]{8,}$/.test(t)))
    throw new ConfigFieldError(
      field,
      source,
      "a comma list (or array) of tokens of at least 8 printable characters without spaces",
      SECRET_VALUE,
    );
  return list as string[];
};

export const FIELDS: Record<keyof IngestConfig, FieldReader<unknown>> = {
  host: text(/^[\w.:-]+$/, "a host name or IP address"),
  port: integer(0, 65_535),
  // 0 turns OTLP/gRPC off (config.ts).
  grpcPort: (raw, field, source) => integer(0, 65_535)(raw, field, source) || null,
  natsUrl: url(["nats", "tls", "ws", "wss"], { several: true, what: "a NATS URL" }),
  partitionCount: integer(1, 4096),
  partitionBy: text(/^(service|service\+route)$/, `"service" or "service+route"`),
  tokens: parseTokens,
  maxBodyBytes: integer(1024, 1024 * 1024 * 1024),
  maxEventsPerRequest: integer(1, 10_000_000),
  maxStringLength: integer(1, 65_536),
  maxFutureSkewMs: duration(0),
  maxAgeMs: duration(1000),
  maxInFlightBytes: integer(1024, 16 * 1024 * 1024 * 1024),
  ackTimeoutMs: duration(10),
  retryAfterS: integer(1, 3600),
  heartbeatMs: duration(10),
  punctuationMs: duration(0),
  logLevel: text(
    /^(fatal|error|warn|info|debug|trace|silent)$/,
    "one of fatal, error, warn, info, debug, trace, silent",
  ),
  tokensFile: optionalPath(),
  tokenRate: integer(0, 10_000_000),
  tokenConcurrency: integer(0, 1_000_000),
  bodyIdleTimeoutMs: duration(0),
  requestTimeoutMs: duration(0),
  headersTimeoutMs: duration(0),
  maxIdempotencyKeys: integer(1, 100_000_000),
  parseWorkers: integer(0, 64),
  maxQueuedParses: integer(0, 100_000),
  parseOffloadBytes: integer(0, 1024 * 1024 * 1024),
  tlsCertFile: optionalPath(),
  tlsKeyFile: optionalPath(),
};

/** `raw` through the field's reader; a bad value is TM_INGEST_CONFIG naming the field and `where` it came from. */
export function readField(
  key: keyof IngestConfig,
  raw: unknown,
  field: string,
  source: SettingSource,
  where: string,
): unknown {
  try {
    return FIELDS[key](raw, field, source);
  } catch (err) {
    if (err instanceof ConfigFieldError) fail(where, err.requirement);
    throw err;
  }
}
