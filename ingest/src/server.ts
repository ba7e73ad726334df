/**
 * `startIngest(config)`: the ingest role. Connects to NATS (ensuring TM_EVENTS), starts the
 * heartbeats, serves the HTTP API and OTLP/gRPC, and returns their addresses and a graceful `close()` that stops
 * accepting, lets in-flight requests finish (their acks included), then drains NATS.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { ServerOptions } from "node:http";
import { pino, type Logger } from "pino";
import type { IngestConfig } from "./config.js";
import { IngestClock } from "./events/ingest-clock.js";
import { BearerAuth } from "./http/bearer-auth.js";
import { registerEventsRoute } from "./http/events-route.js";
import { registerHealthRoutes } from "./http/health-routes.js";
import { InFlightBudget } from "./http/in-flight-budget.js";
import { registerOtlpRoute } from "./http/otlp-route.js";
import { startGrpc, type GrpcServer } from "./grpc/otlp-grpc.js";
import { LOGS, TRACES } from "./otlp/otlp-signal.js";
import { WritePipeline } from "./http/write-pipeline.js";
import { IdempotencyKeys } from "./http/idempotency-keys.js";
import { TokenLimits } from "./http/token-limits.js";
import { redactUrl } from "@tidemark/engine/nats";
import { tlsOptions } from "./http/tls-options.js";
import { serverTimeouts } from "./http/server-timeouts.js";
import { eventsStreamSpec } from "@tidemark/engine/nats";
import { createIngestMetrics } from "./metrics.js";
import { EventPublisher } from "./nats/event-publisher.js";
import { Heartbeat } from "./nats/heartbeat.js";
import { Punctuation } from "./nats/punctuation.js";
import { NatsLink } from "./nats/nats-link.js";
import { BodyParser } from "./parse/body-parser.js";
import { ParsePool } from "./parse/parse-pool.js";

/** In-flight requests get this long to finish on close() before their sockets are cut. */
const CLOSE_GRACE_MS = 10_000;

/** Node's server options: the timeouts (http/server-timeouts.ts), in the TLS options when serving TLS. */
function serverOptions(config: IngestConfig): { http?: ServerOptions; https?: ServerOptions } {
  const timeouts = serverTimeouts(config.headersTimeoutMs, config.requestTimeoutMs);
  const { https } = tlsOptions(config);
  return https ? { https: { ...https, ...timeouts } } : { http: timeouts };
}

export interface IngestServer {
  /** e.g. http://127.0.0.1:4318 */
  readonly url: string;
  /** host:port of OTLP/gRPC, e.g. 127.0.0.1:4317; null when off (grpcPort 0). */
  readonly grpcAddress: string | null;
  close(): Promise<void>;
}

export interface IngestOptions {
  /** Where structured logs go; default a pino logger on stdout at config.logLevel. */
  logger?: Logger;
}

export async function startIngest(config: IngestConfig, opts: IngestOptions = {}): Promise<IngestServer> {
  const log =
    opts.logger ?? pino({ level: config.logLevel, base: { role: "ingest" }, redact: ["req.headers.authorization"] });
  const link = await NatsLink.open(config.natsUrl, log);
  const budget = new InFlightBudget(config.maxInFlightBytes);
  const evicted = { count: (): void => undefined };
  const keys = new IdempotencyKeys(eventsStreamSpec().duplicateWindowMs, config.maxIdempotencyKeys, () =>
    evicted.count(),
  );
  const { maxEventsPerRequest, maxStringLength, maxFutureSkewMs, maxAgeMs } = config;
  const bodyLimits = { maxEventsPerRequest, maxStringLength, maxFutureSkewMs, maxAgeMs };
  const pool =
    config.parseWorkers > 0 ? new ParsePool(config.parseWorkers, config.maxQueuedParses, bodyLimits, log) : null;
  const metrics = createIngestMetrics(
    () => budget.bytes,
    () => keys.size,
    { queued: () => pool?.queued ?? 0, busy: () => pool?.busy ?? 0 },
  );
  const parser = new BodyParser(bodyLimits, config.parseOffloadBytes, pool, () => metrics.parseOffloaded.inc());
  evicted.count = () => metrics.idempotencyKeysEvicted.inc();
  const limits = new TokenLimits(config.tokenRate, config.tokenConcurrency, (limit) => metrics.limited.inc({ limit }));
  const clock = new IngestClock();
  const heartbeat = new Heartbeat(link, clock, config.partitionCount, config.ackTimeoutMs, metrics, log);
  const punctuation = new Punctuation(
    link,
    clock,
    config.partitionCount,
    config.punctuationMs,
    config.ackTimeoutMs,
    metrics,
    log,
  );
  const publisher = new EventPublisher(
    link,
    config.partitionCount,
    config.partitionBy,
    config.ackTimeoutMs,
    metrics,
    () => punctuation.published(),
  );
  const auth = new BearerAuth(config.tokens);
  if (auth.open) log.warn("no bearer tokens configured: writes are open (loopback only)");

  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: "idle",
    // fastify's defaults are 0 (none): a request that never ends would hold its budget for ever.
    requestTimeout: config.requestTimeoutMs,
    ...serverOptions(config),
  }) as unknown as FastifyInstance;
  // Bodies are read by the write pipeline itself (limits, gzip, in-flight budget), never by fastify.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
  let closing: Promise<void> | undefined;
  // While closing, answer in-flight requests with Connection: close so keep-alive sockets end
  // and close() does not wait for the keep-alive timeout.
  app.addHook("onSend", async (_req, reply) => {
    if (closing) reply.header("connection", "close");
  });
  // A client error keeps its message; anything else answers 500 without internal text (logged instead).
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const status = err.statusCode ?? 500;
    if (status < 500)
      return reply.code(status).send({ error: { code: err.code ?? "TM_INGEST_BAD_REQUEST", message: err.message } });
    log.error({ err, url: req.url }, "request failed");
    return reply
      .code(500)
      .send({ error: { code: "TM_INGEST_INTERNAL", message: "internal error: the ingest log has the details" } });
  });
  app.addHook("onResponse", async (req, reply) => {
    const endpoint = req.routeOptions.url;
    if (endpoint?.startsWith("/v1/"))
      metrics.requests.observe({ endpoint, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) log.warn({ url: req.url, status: reply.statusCode }, "request failed");
  });

  const pipeline = new WritePipeline({ config, auth, budget, link, publisher, clock, limits, keys, metrics, parser });
  const bodyOpts = { ...config };
  registerEventsRoute(app, pipeline, bodyOpts, metrics);
  registerOtlpRoute(app, TRACES, pipeline, bodyOpts, metrics);
  registerOtlpRoute(app, LOGS, pipeline, bodyOpts, metrics);
  registerHealthRoutes(app, link, metrics, config.retryAfterS);

  let grpc: GrpcServer | undefined;
  try {
    await app.listen({ port: config.port, host: config.host });
    if (config.grpcPort !== null) grpc = await startGrpc({ config, pipeline, metrics, log });
  } catch (err) {
    await app.close();
    await pool?.close();
    await link.close();
    throw err;
  }
  heartbeat.start(config.heartbeatMs);
  const addr = app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tlsCertFile ? "https" : "http"}://${host}:${port}`;
  const grpcAddress = grpc?.address ?? null;
  log.info(
    { url, grpc: grpcAddress, nats: redactUrl(config.natsUrl), partitionCount: config.partitionCount },
    "ingest listening",
  );

  return {
    url,
    grpcAddress,
    close: () =>
      (closing ??= (async () => {
        const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS).unref();
        await Promise.all([app.close(), grpc?.close()]);
        clearTimeout(force);
        await pool?.close();
        punctuation.stop();
        await heartbeat.stop();
        await link.close();
        // prom-client's GC metric holds the registry for the life of the process: let go of ours.
        metrics.registry.clear();
        log.info("ingest closed");
      })()),
  };
}
