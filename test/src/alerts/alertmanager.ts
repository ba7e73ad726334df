/**
 * A real Alertmanager (Debian's prometheus-alertmanager) for tests: a free loopback port, no
 * cluster, storage in a temp dir, and a webhook receiver on a loopback HTTP server that records
 * every notification (firing and resolved). Stopped by its PID. The binary is resolved from PATH,
 * as test setup resolves nats-server and promtool; without it the test fails naming the package.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@tidemark/deploy";
import { waitFor } from "../index.js";

/** Debian's package and binary name, looked up on PATH. */
export const ALERTMANAGER = "prometheus-alertmanager";

/** An alert as GET /api/v2/alerts returns it. */
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  status: { state: string };
}

/** One webhook notification's alert (Alertmanager's webhook payload). */
export interface HookAlert {
  status: "firing" | "resolved";
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
}

export interface TestAlertmanager {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** Every alert of every webhook notification so far, in arrival order. */
  readonly notified: HookAlert[];
  /** GET /api/v2/alerts: the alerts Alertmanager holds active (resolved ones are not listed). */
  alerts(): Promise<GettableAlert[]>;
  /** Stops the server, keeping its storage and port (start() brings it back). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Waits until `am` was notified that `service`'s alert resolved (`what` names it if not), and returns that alert. */
export async function resolvedNotification(am: TestAlertmanager, service: string, what: string): Promise<HookAlert> {
  const find = (): HookAlert | undefined =>
    am.notified.find((n) => n.status === "resolved" && n.labels["service"] === service);
  await waitFor(() => find() !== undefined, 20_000, what);
  return find() as HookAlert;
}

export async function startAlertmanager(): Promise<TestAlertmanager> {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-alertmanager-"));
  const notified: HookAlert[] = [];
  const hook = await webhook(notified);
  const port = await freePort();
  const hookPort = (hook.address() as { port: number }).port;
  const config = join(dir, "alertmanager.yml");
  writeFileSync(
    config,
    [
      "route:",
      "  receiver: hook",
      "  group_by: ['alertname', 'service']",
      "  group_wait: 0s",
      "  group_interval: 1s",
      "  repeat_interval: 1h",
      "receivers:",
      "  - name: hook",
      "    webhook_configs:",
      `      - url: http://127.0.0.1:${hookPort}/hook`,
      "        send_resolved: true",
      "",
    ].join("\n"),
  );
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let log = "";
  const start = async (): Promise<void> => {
    if (child) return;
    const c = spawn(
      ALERTMANAGER,
      [
        `--config.file=${config}`,
        `--storage.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--cluster.listen-address=",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    c.stdout?.on("data", (b: Buffer) => (log += b.toString("utf8")));
    c.stderr?.on("data", (b: Buffer) => (log += b.toString("utf8")));
    let missing: Error | undefined;
    c.once("error", (err: NodeJS.ErrnoException) => {
      missing =
        err.code === "ENOENT"
          ? new Error(`${ALERTMANAGER} is not on PATH: install the prometheus-alertmanager package (0.25)`)
          : err;
    });
    child = c;
    await waitFor(
      async () => {
        if (missing) throw missing;
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true;
      },
      20_000,
      `alertmanager on ${url} to be ready:\n${log}`,
    );
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    process.kill(c.pid as number, "SIGTERM");
    await exited;
  };
  await start();
  return {
    url,
    notified,
    async alerts() {
      const res = await fetch(`${url}/api/v2/alerts`);
      if (!res.ok) throw new Error(`GET /api/v2/alerts: HTTP ${res.status}`);
      return (await res.json()) as GettableAlert[];
    },
    kill,
    start,
    async stop() {
      await kill();
      await new Promise((r) => hook.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback HTTP server taking Alertmanager's webhook posts. */
async function webhook(into: HookAlert[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (b: Buffer) => (body += b.toString("utf8")));
    req.on("end", () => {
      try {
        into.push(...(JSON.parse(body) as { alerts: HookAlert[] }).alerts);
      } finally {
        res.writeHead(200).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}
