/**
 * The value parsers of the ingest configuration (config.ts): each names the field, where its
 * value came from, and what to write instead.
 */
import { parseDuration } from "@tidemark/engine/core";
import type { IngestConfig } from "./config.js";
import { IngestError } from "./errors.js";

export function fail(field: string, message: string): never {
  throw new IngestError("TM_INGEST_CONFIG", `config ${field}: ${message}`);
}

export type FieldParser = (raw: unknown, where: string) => unknown;

/** One NATS URL or a comma list (any server of a cluster is enough to join it). */
const NATS_URLS = /^(nats|tls|ws|wss):\/\/[^\s,]+(\s*,\s*(nats|tls|ws|wss):\/\/[^\s,]+)*$/;

function int(min: number, max: number): FieldParser {
  return (raw, where) => {
    const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
    if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
      fail(where, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return n;
  };
}

function duration(min: number): FieldParser {
  return (raw, where) => {
    let ms: number;
    try {
      ms = parseDuration(raw as string | number);
    } catch {
      fail(where, `must be a duration like 500ms, 10s, 5m, 24h, got ${JSON.stringify(raw)}`);
    }
    if (ms < min) fail(where, `must be at least ${min} ms, got ${JSON.stringify(raw)}`);
    return ms;
  };
}

function text(pattern: RegExp, hint: string): FieldParser {
  return (raw, where) => {
    if (typeof raw !== "string" || !pattern.test(raw)) fail(where, `${hint}, got ${JSON.stringify(raw)}`);
    return raw;
  };
}

const optionalPath: FieldParser = (raw, where) => {
  if (raw === null || raw === "") return null;
  if (typeof raw !== "string") fail(where, `must be a file path, got ${JSON.stringify(raw)}`);
  return raw;
};

export const parseTokens: FieldParser = (raw, where) => {
  const list =
    typeof raw === "string"
      ? raw
          .split(",")
          .map((t) => t.trim())
          .filter((t) => t !== "")
      : raw;
  if (!Array.isArray(list) || list.some((t) => typeof t !== "string" || !/^[\x21-\x7e]{8,}$/.test(t)))
    fail(where, "must be a comma list (or array) of tokens of at least 8 printable characters without spaces");
  return list as string[];
};

export const FIELDS: Record<keyof IngestConfig, FieldParser> = {
  host: text(/^[\w.:-]+$/, "must be a host name or IP address"),
  port: int(0, 65_535),
  // 0 turns OTLP/gRPC off (config.ts).
  grpcPort: (raw, where) => (int(0, 65_535)(raw, where) as number) || null,
  natsUrl: text(NATS_URLS, "must be a NATS URL such as nats://127.0.0.1:4222, or a comma list of them"),
  partitionCount: int(1, 4096),
  partitionBy: text(/^(service|service\+route)$/, `must be "service" or "service+route"`),
  tokens: parseTokens,
  maxBodyBytes: int(1024, 1024 * 1024 * 1024),
  maxEventsPerRequest: int(1, 10_000_000),
  maxStringLength: int(1, 65_536),
  maxFutureSkewMs: duration(0),
  maxAgeMs: duration(1000),
  maxInFlightBytes: int(1024, 16 * 1024 * 1024 * 1024),
  ackTimeoutMs: duration(10),
  retryAfterS: int(1, 3600),
  heartbeatMs: duration(10),
  punctuationMs: duration(0),
  logLevel: text(
    /^(fatal|error|warn|info|debug|trace|silent)$/,
    "must be one of fatal, error, warn, info, debug, trace, silent",
  ),
  tokensFile: optionalPath,
  tokenRate: int(0, 10_000_000),
  tokenConcurrency: int(0, 1_000_000),
  bodyIdleTimeoutMs: duration(0),
  requestTimeoutMs: duration(0),
  headersTimeoutMs: duration(0),
  maxIdempotencyKeys: int(1, 100_000_000),
  parseWorkers: int(0, 64),
  maxQueuedParses: int(0, 100_000),
  parseOffloadBytes: int(0, 1024 * 1024 * 1024),
  tlsCertFile: optionalPath,
  tlsKeyFile: optionalPath,
};
