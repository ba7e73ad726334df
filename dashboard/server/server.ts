import { existsSync } from "node:fs";
import { join } from "node:path";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import fastifyStatic from "@fastify/static";
import fastifyWebsocket from "@fastify/websocket";
import { pino, type Logger } from "pino";
import type { Registry } from "prom-client";
import { alertMetrics } from "./alerts/alert-metrics.js";
import { alertRoutes } from "./alerts/alert-routes.js";
import { startAlerting, type Alerting } from "./alerts/alerting.js";
import { apiRoutes } from "./api-routes.js";
import { guard, hostGuard, WS_PROTOCOL } from "./auth.js";
import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";
import { createFanout, type Fanout } from "./fanout.js";
import { natsConnectOptions, redactUrl } from "@tidemark/engine/nats";
import { BudgetLedger } from "./slo/budget-ledger.js";
import { budgetMetrics } from "./slo/budget-metrics.js";
import { BudgetStore } from "./slo/budget-store.js";
import { answerErrors, requestForLog, securityHeaders, serverOptions } from "./http-hardening.js";
import { dashboardMetrics } from "./metrics.js";
import { startPaneFeed } from "./pane-feed.js";
import { PaneSamples } from "./prom/pane-samples.js";
import { SloSeries } from "./slo/slo-series.js";
import { promApi } from "./prom/prom-api.js";
import { within } from "./within.js";
import { serveConnection, type WsSocket } from "./ws-connection.js";

/** How long a close waits for the HTTP connections to end, before cutting them and again after. */
const CLOSE_WAIT_MS = 3_000;

export interface DashboardServer {
  /** e.g. http://127.0.0.1:3000 */
  readonly url: string;
  readonly fanout: Fanout;
  close(): Promise<void>;
}

/** Starts the dashboard: HTTP + WebSocket server, and the TM_PANES / tm.status feed. */
/**
 * Starts the dashboard server. `now` is the clock the pane feed's replay window is measured from
 * (`replayMs` before it, by TM_PANES' publish times); tests pass their own.
 */
export async function startDashboard(
  config: DashboardConfig,
  logger?: Logger,
  now: () => number = Date.now,
): Promise<DashboardServer> {
  const log = logger ?? pino({ name: "tidemark-dashboard", level: config.logLevel });
  const metrics = dashboardMetrics();
  const fanout = createFanout(config, metrics);
  const samples = new PaneSamples({
    windowsPerSeries: config.promWindowsPerSeries,
    maxWindows: config.promMaxWindows,
    discardingPolicies: config.discardingPolicies,
  });
  fanout.store.observe((pane) => samples.apply(pane));
  const sloSeries = config.slos.length > 0 ? new SloSeries() : undefined;
  const budget = config.slos.length > 0 ? sloBudget(config, log, metrics.registry) : undefined;
  /** Set up once the server listens (alerts link to its URL), before the feed starts. */
  const alerting: { current?: Alerting } = {};
  const app = Fastify({
    loggerInstance: log.child(
      { component: "http" },
      { level: "warn", serializers: { req: requestForLog } },
    ) as unknown as FastifyBaseLogger,
    ...serverOptions(config),
  }) as unknown as FastifyInstance;
  // A client offering the `tidemark` protocol (with its token protocol) gets it selected (docs/security.md).
  await app.register(fastifyWebsocket, {
    options: {
      maxPayload: 1 << 20,
      handleProtocols: (offered: Set<string>) => (offered.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    },
  });
  app.addHook("onRequest", async (req, reply) => {
    const refused = hostGuard(config);
    await refused(req, reply);
    if (reply.sent) metrics.hostRejected.inc();
  });
  app.addHook("onSend", securityHeaders);
  app.setErrorHandler(answerErrors);

  app.get("/metrics", async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  app.get("/healthz", async () => ({ ok: true }));
  app.register(async (api) => {
    api.addHook("preValidation", guard(config, false));
    apiRoutes(api, fanout.store, fanout.status);
    alertRoutes(api, {
      view: () => alerting.current?.view() ?? { active: [], history: [], rules: [] },
    });
  });
  app.register(promApi(config, samples, { metrics, extra: sloSeries }));
  app.register(async (ws) => {
    ws.addHook("preValidation", guard(config, true, true));
    ws.get("/ws", { websocket: true }, (socket: WsSocket, req) =>
      serveConnection(socket, req, {
        config,
        hub: fanout.hub,
        metrics,
        onAttach: () => log.info({ clients: fanout.hub.clients }, "dashboard client connected"),
        onDetach: () => log.info({ clients: fanout.hub.clients }, "dashboard client disconnected"),
      }),
    );
  });
  await serveApp(app, config, log);

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    throw new DashboardError(
      "TM_DASHBOARD_LISTEN_FAILED",
      `cannot listen on ${config.host}:${config.port} (${(err as Error).message}): pick another --port or stop what uses it`,
    );
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const url = `${config.tlsCertFile ? "https" : "http"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  const alerts = startAlerting(
    config.alerts,
    config.alerts.externalUrl ?? url,
    samples,
    alertMetrics(
      metrics.registry,
      config.alerts.rules.map((r) => r.alert),
      config.alerts.alertmanagers,
    ),
    log.child({ component: "alerts" }),
    undefined,
    { slos: config.slos, series: sloSeries, ...(budget ? { budget } : {}) },
  );
  alerting.current = alerts;
  // After the Prometheus series: a flush reads the rules from them (docs/decisions/0014-alerts.md).
  fanout.store.observe((pane) => alerts.offer(pane));
  if (config.alerts.rules.length > 0 || config.slos.length > 0) {
    fanout.hub.showAlerts(() => alerts.view());
    alerts.onChange(() => fanout.hub.alertsChanged());
  }
  // The feed starts once the server listens, so every alert links to the URL it really serves, and
  // once the SLOs' budgets are read back from TM_SLO_BUDGET, so a replayed final pane is not counted twice.
  const startFeed = () =>
    startPaneFeed(
      config,
      log.child({ component: "feed" }),
      {
        ...fanout.sink,
        skipped: (what) => metrics.feedSkipped.inc({ what }),
        feedChanged: (f) => {
          fanout.sink.feedChanged(f);
          alerts.feedChanged(f.state);
        },
      },
      now,
    );
  let stopping = false;
  const feed = (budget ? budget.store.restore() : Promise.resolve(undefined)).then((restored) => {
    if (restored) log.info(restored, "slo budget: restored from TM_SLO_BUDGET");
    return stopping ? undefined : startFeed();
  });
  log.info(
    { url, nats: redactUrl(config.nats), replayMs: config.replayMs, alertRules: config.alerts.rules.length },
    "dashboard listening",
  );
  return {
    url,
    fanout,
    async close() {
      fanout.close();
      stopping = true;
      await budget?.store.close();
      await (await feed)?.close();
      alerts.close();
      // A connection that stays open (a browser's keep-alive request in flight) would hold the close
      // for ever: after CLOSE_WAIT_MS every connection is cut, and the close is waited on again.
      const closing = app.close();
      if (await within(CLOSE_WAIT_MS, closing)) return;
      log.warn({ waitedMs: CLOSE_WAIT_MS }, "HTTP connections still open at close: cutting them");
      app.server.closeAllConnections();
      if (!(await within(CLOSE_WAIT_MS, closing))) log.warn({}, "the HTTP server did not close: leaving it");
    },
  };
}

/** The SLOs' budget ledgers and their store in TM_SLO_BUDGET (docs/slo.md, "Error budget"). */
function sloBudget(config: DashboardConfig, log: Logger, registry: Registry) {
  const ledgers = config.slos.map((slo) => new BudgetLedger(slo));
  const store = new BudgetStore(ledgers, {
    connectOptions: natsConnectOptions(config.nats, {
      TIDEMARK_NATS_USER: config.natsUser ?? undefined,
      TIDEMARK_NATS_PASSWORD: config.natsPassword ?? undefined,
      TIDEMARK_NATS_TOKEN: config.natsToken ?? undefined,
    }),
    retryMs: config.retryMs,
    log: log.child({ component: "slo-budget" }),
    counts: budgetMetrics(registry),
  });
  return { ledgers, store, flushed: () => store.flushed() };
}

async function serveApp(app: FastifyInstance, config: DashboardConfig, log: Logger): Promise<void> {
  if (existsSync(join(config.appDir, "index.html"))) {
    await app.register(fastifyStatic, { root: config.appDir, index: "index.html" });
    return;
  }
  const e = new DashboardError(
    "TM_DASHBOARD_APP_MISSING",
    `no built app in ${config.appDir}: run npm run build -w @tidemark/dashboard`,
  );
  log.warn({ code: e.code }, e.message);
  app.get("/", async (_req, reply) => reply.code(503).type("text/plain").send(`[${e.code}] ${e.message}\n`));
}
