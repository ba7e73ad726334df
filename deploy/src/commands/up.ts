import { resolve } from "node:path";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { natsCredentialEnv } from "../config/nats-env.js";
import { dashboardToken, DASHBOARD_TOKEN_FILE, type DashboardToken } from "../config/dashboard-token.js";
import { localIngestToken, localToken, tokenList } from "../config/ingest-token.js";
import { NATS_TOKEN_FILE, writeNatsConfig } from "../nats/up-nats-config.js";
import { availableParallelism } from "node:os";
import {
  dashboardArgs,
  defaultWorkers,
  engineArgs,
  ingestArgs,
  mergeArgs,
  mergePartitionsOf,
  remoteWriteArgs,
  remoteWriteConfigured,
  validateRoles,
  type RoleContext,
} from "../config/role-configs.js";
import { ensureStreams } from "../config/stream-setup.js";
import { loadTidemarkConfig, type TidemarkConfig } from "../config/tidemark-config.js";
import { spawnNatsServer } from "../nats/nats-server.js";
import { refuseCountAsPartitions } from "../partition-count.js";
import { preferredOrFreePort } from "../ports.js";
import { readyLine } from "../ready-line.js";
import { spawnRole, stopAll, type Stoppable } from "../supervisor.js";
import { removeUpPids, stopLeftovers, writeUpPids } from "../up-pids.js";
import { restoreForUp } from "../up-restore.js";

type Log = (line: string) => void;

/**
 * `tidemark up`: everything on one machine (docs/operations.md, "`tidemark up`"). nats-server as a
 * child (store in <data>/nats) unless --nats or nats.url is given; the streams; ingest, `--workers`
 * engine workers (each a contiguous range of the partitions), the merge operator and the dashboard
 * as child processes (crash isolation, both cores; docs/decisions/0008); the demo unless --no-demo.
 * SIGINT/SIGTERM stop demo, ingest, the merge operator and the workers (final checkpoints), dashboard
 * and nats-server in that order, leaving <data> in place: a second `up` resumes from it, with any
 * --workers (up-restore.ts says what it restores from).
 */
export const up: Command = {
  summary: "run the whole stack on this machine, with live demo traffic",
  usage:
    "tidemark up [--config FILE] [--data DIR] [--nats URL] [--no-demo] [--ingest-port 4318] [--grpc-port 4317] [--dashboard-port 3000]\n" +
    "            [--partition-count 8] [--workers N] [--from-savepoint DIR] [--rate N] [--corr X]",
  booleans: ["demo"],
  async run(flags: Flags): Promise<number> {
    const log: Log = (line) => void process.stdout.write(`tidemark up: ${line}\n`);
    refuseCountAsPartitions(flags, "up");
    const loaded = loadTidemarkConfig({
      flag: flags.get("config"),
      env: process.env,
      partitionCount: flags.get("partition-count"),
    });
    const config: TidemarkConfig = Object.freeze({ ...loaded, data: resolve(flags.get("data") ?? loaded.data) });
    const started: Stoppable[] = [];
    let stopping: Promise<void> | undefined;
    const shutdown = (): Promise<void> => (stopping ??= stopAll(started, log));
    const signalled = new Promise<string>((r) =>
      process.once("SIGINT", () => r("SIGINT")).once("SIGTERM", () => r("SIGTERM")),
    );
    try {
      const P = config.core.partitions;
      const ingestPort = await port(flags, "ingest-port", 4318);
      const ports = {
        ingestPort,
        grpcPort: await grpcPort(flags, config, ingestPort),
        dashboardPort: await port(flags, "dashboard-port", 3000),
        workers: flags.int("workers", defaultWorkers(P, availableParallelism()), 1, P),
        mergePartitions: mergePartitionsOf(config, process.env),
      };
      // A dashboard bound off loopback needs a read token: generated here when none is configured.
      const read = dashboardToken(config, process.env);
      await validateRoles({ config, natsUrl: "nats://127.0.0.1:4222", ...ports }, { ...process.env, ...read.env });
      await stopLeftovers(config.data, log);
      const own = flags.get("nats") ?? config.nats.url;
      const local = own === undefined ? await startNats(config, started, log) : undefined;
      const natsUrl = own ?? (local?.url as string);
      // Our own nats-server takes the generated token; a given one takes the configured credentials.
      const nats = local ? { ...config.nats, user: undefined, password: undefined, token: local.token } : config.nats;
      const streams = await ensureStreams(natsUrl, nats);
      log(
        `streams ${Object.entries(streams)
          .map(([name, how]) => `${name} (${how})`)
          .join(", ")}`,
      );
      const savepoint = await restoreForUp(config.data, P, ports.workers, flags.get("from-savepoint"), log);
      const { token, created } = localIngestToken(config.data);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        // Credentials of another NATS in the environment would win over our own server's token.
        ...(local ? { TIDEMARK_NATS_USER: undefined, TIDEMARK_NATS_PASSWORD: undefined } : {}),
        ...natsCredentialEnv(nats),
        ...sessionsEnv(config),
        ...read.env,
        TIDEMARK_INGEST_TOKENS: tokenList(token, configuredTokens(config)).join(","),
        ...(savepoint === undefined ? {} : { TIDEMARK_FROM_SAVEPOINT: resolve(savepoint) }),
      };
      const ready = await startRoles({ config, natsUrl, ...ports }, env, started);
      const ingestUrl = String(ready.ingest.ingest);
      const grpcAddress = typeof ready.ingest.grpc === "string" ? ready.ingest.grpc : null;
      const dashboardUrl = String(ready.dashboard.dashboard);
      if (flags.bool("demo", config.demo.enabled)) await startDemo(flags, config, ingestUrl, env, started, log);
      else log("demo traffic off (--no-demo)");
      printWelcome(log, { dashboardUrl, ingestUrl, grpcAddress, token, created, data: config.data, read });
      recordPids(config, started);
      const pids = Object.fromEntries(started.map((s) => [s.name, s.pid]));
      process.stdout.write(
        readyLine({
          dashboard: dashboardUrl,
          ingest: ingestUrl,
          grpc: grpcAddress,
          nats: natsUrl,
          ...(local ? { natsToken: local.token } : {}),
          token,
          ...(read.token === null ? {} : { readToken: read.token }),
          data: config.data,
          engine: ready.engines[0]?.engine,
          engines: ready.engines.map((r) => r.engine),
          merge: ready.merge.merge,
          ...(ready.remoteWrite ? { remoteWrite: ready.remoteWrite.remoteWrite } : {}),
          pids,
        }) + "\n",
      );
    } catch (err) {
      const e = err as { code?: string; message?: string };
      log(`failed: ${e.code ? `[${e.code}] ` : ""}${e.message ?? String(err)}`);
      await shutdown();
      removeUpPids(config.data);
      return 1;
    }
    const why = await Promise.race([
      signalled,
      ...started.map((s) => s.exited.then((code) => `${s.name} exited (code ${code})`)),
    ]);
    log(`${why}: stopping`);
    await shutdown();
    removeUpPids(config.data);
    log("stopped; data left in place");
    return why.startsWith("SIG") ? 0 : 1;
  },
};

/** The flag's port when given (0 = any free port), else `preferred` when free, else a free one. */
async function port(flags: Flags, name: string, preferred: number): Promise<number> {
  return flags.get(name) === undefined ? preferredOrFreePort(preferred) : flags.int(name, preferred, 0, 65535);
}

/**
 * `--grpc-port`, else 4317 or a free port as for HTTP, unless ingest decides: the config file or
 * the environment sets it, or ingest's HTTP port is ephemeral (its gRPC port then is too).
 */
async function grpcPort(flags: Flags, config: TidemarkConfig, ingestPort: number): Promise<number | undefined> {
  if (flags.get("grpc-port") !== undefined) return flags.int("grpc-port", 4317, 0, 65535);
  const inFile = (config.roles.ingest as { grpcPort?: unknown } | undefined)?.grpcPort !== undefined;
  if (inFile || process.env.TIDEMARK_INGEST_GRPC_PORT !== undefined || ingestPort === 0) return undefined;
  return preferredOrFreePort(4317);
}

/**
 * `up` runs session windows, so the demo's Sessions panel has data (ADR 0009, "Live path"), unless
 * the environment or the file's `engine.sessions.enabled` already decides, or events are
 * partitioned by service and route.
 */
function sessionsEnv(config: TidemarkConfig): NodeJS.ProcessEnv {
  const engine = config.document.engine as { sessions?: { enabled?: unknown } } | undefined;
  const decided = process.env.TIDEMARK_SESSIONS !== undefined || engine?.sessions?.enabled !== undefined;
  // Sessions need a user's events in one place: not with events spread by route (ADR 0032).
  const byRoute = (process.env.TIDEMARK_PARTITION_BY ?? config.document.partitionBy) === "service+route";
  return decided || byRoute ? {} : { TIDEMARK_SESSIONS: "on" };
}

function configuredTokens(config: TidemarkConfig): string[] {
  const fromEnv = process.env.TIDEMARK_INGEST_TOKENS?.split(",").map((t) => t.trim()) ?? [];
  const fromFile = config.roles.ingest?.tokens;
  return [...fromEnv, ...(Array.isArray(fromFile) ? fromFile.map(String) : [])].filter((t) => t !== "");
}

/**
 * Starts nats-server from a config file in <data> that requires a token (docs/security.md, "NATS
 * under `up`"): generated once, kept in <data>/nats-token (0600) and handed to the server and
 * the roles in the environment, so a local user cannot publish to tm.events.* past ingest.
 */
async function startNats(
  config: TidemarkConfig,
  started: Stoppable[],
  log: Log,
): Promise<{ url: string; token: string }> {
  const port = await preferredOrFreePort(config.nats.port);
  const monitorPort = await preferredOrFreePort(config.nats.monitorPort);
  const { token } = localToken(config.data, NATS_TOKEN_FILE);
  const storeDir = resolve(config.data, "nats");
  const configFile = writeNatsConfig(config.data, { port, monitorPort, storeDir });
  const nats = await spawnNatsServer({
    port,
    monitorPort,
    storeDir,
    configFile,
    detached: true,
    env: { ...process.env, TIDEMARK_NATS_SERVER_TOKEN: token },
  });
  started.push({
    name: "nats-server",
    pid: nats.pid,
    markers: ["nats-server", configFile],
    exited: nats.exited,
    stop: () => nats.stop(),
  });
  recordPids(config, started);
  log(
    `started nats-server pid ${nats.pid} at ${nats.url} (monitor ${nats.monitorUrl}, store ${nats.storeDir}; token in ${resolve(config.data, NATS_TOKEN_FILE)})`,
  );
  return { url: nats.url, token };
}

/** <data>/up.pids, for the next `up` should this one be killed (up-pids.ts). */
function recordPids(config: TidemarkConfig, started: readonly Stoppable[]): void {
  writeUpPids(
    config.data,
    started.map((s) => ({ name: s.name, pid: s.pid, markers: s.markers, stopsItself: s.name !== "nats-server" })),
  );
}

interface RolesReady {
  ingest: Record<string, unknown>;
  /** In partition order; the first is also the ready line's `engine`. */
  engines: Record<string, unknown>[];
  merge: Record<string, unknown>;
  dashboard: Record<string, unknown>;
  /** When `remoteWrite.url` is configured (docs/remote-write.md). */
  remoteWrite?: Record<string, unknown>;
}

/** Starts the roles side by side; registers each that came up (stop order: reverse). */
async function startRoles(ctx: RoleContext, env: NodeJS.ProcessEnv, started: Stoppable[]): Promise<RolesReady> {
  const engines = Array.from({ length: ctx.workers }, (_, i) =>
    spawnRole("engine", engineArgs(ctx, i), env, 60_000, i === 0 ? "engine" : `engine-${i + 1}`),
  );
  const merges = Array.from({ length: ctx.mergePartitions }, (_, m) =>
    spawnRole("merge", mergeArgs(ctx, m), env, 60_000, m === 0 ? "merge" : `merge-${m}`),
  );
  const all = await Promise.allSettled([
    spawnRole("dashboard", dashboardArgs(ctx), env),
    ...engines,
    ...merges,
    spawnRole("ingest", ingestArgs(ctx), env),
  ]);
  for (const r of all) if (r.status === "fulfilled") started.push(r.value.child);
  for (const r of all) if (r.status === "rejected") throw r.reason;
  const ready = all.map((r) => (r.status === "fulfilled" ? r.value.ready : {}));
  const out: RolesReady = {
    dashboard: ready[0] ?? {},
    engines: ready.slice(1, 1 + ctx.workers),
    merge: ready[1 + ctx.workers] ?? {},
    ingest: ready[1 + ctx.workers + ctx.mergePartitions] ?? {},
  };
  if (!remoteWriteConfigured(ctx.config, env)) return out;
  const rw = await spawnRole("remote-write", remoteWriteArgs(ctx), env);
  started.push(rw.child);
  return { ...out, remoteWrite: rw.ready };
}

async function startDemo(
  flags: Flags,
  config: TidemarkConfig,
  ingestUrl: string,
  env: NodeJS.ProcessEnv,
  started: Stoppable[],
  log: Log,
): Promise<void> {
  const args = [
    "--ingest",
    ingestUrl,
    "--rate",
    flags.get("rate") ?? String(config.demo.rate),
    "--corr",
    flags.get("corr") ?? String(config.demo.corr),
  ];
  const { child } = await spawnRole("demo", config.file === undefined ? args : [...args, "--config", config.file], env);
  started.push(child);
  log(`demo traffic flowing (pid ${child.pid}; --no-demo to switch it off)`);
}

function printWelcome(
  log: Log,
  w: {
    dashboardUrl: string;
    ingestUrl: string;
    grpcAddress: string | null;
    token: string;
    created: boolean;
    data: string;
    read: DashboardToken;
  },
): void {
  const sample = '{"service":"my-api","route":"GET /hello","status":200,"latency_ms":12.5,"user":"alice"}';
  log("");
  log(`dashboard  ${w.dashboardUrl}`);
  log(`ingest     ${w.ingestUrl}  (POST /v1/events NDJSON/JSON, POST /v1/traces and /v1/logs OTLP/HTTP)`);
  if (w.grpcAddress !== null) log(`otlp grpc  ${w.grpcAddress}  (TraceService/Export, LogsService/Export)`);
  log(`token      ${w.token}  (${w.created ? "generated; " : ""}kept in ${resolve(w.data, "ingest-token")})`);
  if (w.read.token !== null) {
    const where = resolve(w.data, DASHBOARD_TOKEN_FILE);
    log(`read token ${w.read.token}  (${w.read.created ? "generated; " : ""}kept in ${where})`);
    log(
      `  the dashboard binds ${w.read.host}: open ${w.dashboardUrl}/#token=<read token> (the page keeps it out of its URL)`,
    );
  }
  log("send your own events:");
  log(`  curl -sS -H 'Authorization: Bearer ${w.token}' -H 'Content-Type: application/x-ndjson' \\`);
  log(`       --data-binary '${sample}' ${w.ingestUrl}/v1/events`);
  log("Ctrl-C stops everything in order (final engine checkpoint); data stays for the next `tidemark up`.");
  log("");
}
