import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/** `tidemark dashboard`: the WebSocket fan-out server and the Svelte app (docs/websocket-protocol.md). */
export const dashboard: Command = {
  summary: "serve the live dashboard (panes from TM_PANES, status from tm.status)",
  usage:
    "tidemark dashboard [--port 3000] [--host 127.0.0.1] [--nats URL] [--config FILE] [--replay 1h]\n" +
    "                   [--token-file FILE] [--tls-cert FILE --tls-key FILE] [--alertmanager URL[,URL]]\n" +
    "                   [--max-clients 500] [--max-clients-per-address 32] [--max-panels 256]\n" +
    "                   [--max-queued-bytes 67108864] [--subscribe-rate 20]\n" +
    "                   [--query-max-series 20000] [--query-max-samples 5000000] [--query-timeout 2m] [--query-max-step-time 500ms]\n" +
    "                   [--query-max-response-bytes 67108864] [--query-max-concurrency 4] [--query-max-queued 64]\n" +
    "                   [--headers-timeout 10s] [--request-timeout 30s] [--connection-timeout 5m]\n" +
    "  read tokens: TIDEMARK_DASHBOARD_TOKEN or --token-file (--token T shows in ps: discouraged)",
  async run(flags: Flags): Promise<number> {
    const { envConfig, readConfigFile, resolveConfig, startDashboard } = await import("@tidemark/dashboard");
    const file = flags.get("config");
    const config = resolveConfig(file ? readConfigFile(file) : {}, envConfig(process.env), {
      port: flags.get("port"),
      host: flags.get("host"),
      nats: flags.get("nats"),
      replayMs: flags.get("replay"),
      readToken: flags.get("token"),
      readTokenFile: flags.get("token-file"),
      tlsCertFile: flags.get("tls-cert"),
      tlsKeyFile: flags.get("tls-key"),
      maxClients: flags.get("max-clients"),
      maxClientsPerAddress: flags.get("max-clients-per-address"),
      maxPanelsPerClient: flags.get("max-panels"),
      maxQueuedBytes: flags.get("max-queued-bytes"),
      subscribesPerSecond: flags.get("subscribe-rate"),
      queryMaxSeries: flags.get("query-max-series"),
      queryMaxSamples: flags.get("query-max-samples"),
      queryMaxStepMs: flags.get("query-max-step-time"),
      queryMaxResponseBytes: flags.get("query-max-response-bytes"),
      queryTimeoutMs: flags.get("query-timeout"),
      queryMaxConcurrency: flags.get("query-max-concurrency"),
      queryMaxQueued: flags.get("query-max-queued"),
      headersTimeoutMs: flags.get("headers-timeout"),
      requestTimeoutMs: flags.get("request-timeout"),
      connectionTimeoutMs: flags.get("connection-timeout"),
      alertmanagers: flags.get("alertmanager"),
    });
    const server = await startDashboard(config);
    process.stdout.write(readyLine({ dashboard: server.url }) + "\n");
    await stopRequested();
    await server.close();
    return 0;
  },
};
