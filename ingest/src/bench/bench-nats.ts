/**
 * The benchmark's own nats-server: `nats-server -js` on a free loopback port with a temp store,
 * stopped by PID. (The test harness and @tidemark/deploy depend on ingest, so the bench cannot
 * import them without a package cycle.)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchNats {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: "127.0.0.1" }, () => s.end(() => resolve(true)));
    s.once("error", () => resolve(false));
  });
}

export async function startBenchNats(): Promise<BenchNats> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "tidemark-bench-nats-"));
  const child = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", store], { stdio: "ignore" });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  for (let i = 0; i < 100 && !(await canConnect(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGTERM");
      await exited;
      rmSync(store, { recursive: true, force: true });
    },
  };
}
