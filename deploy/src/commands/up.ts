import { resolve } from "node:path";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { spawnNatsServer } from "../nats/nats-server.js";
import { preferredOrFreePort } from "../ports.js";
import { readyLine } from "../ready-line.js";
import { stopAll, type Stoppable } from "../supervisor.js";

/**
 * `tidemark up`: everything on one machine (design §11). Starts nats-server as a child
 * (store in <data>/nats) unless --nats is given, then every role that exists, and stops them
 * all in reverse order on SIGINT/SIGTERM, leaving <data> intact.
 */
export const up: Command = {
  summary: "run the whole stack on this machine",
  usage: "tidemark up [--data DIR] [--nats URL] [--no-demo] [--ingest-port 4318] [--dashboard-port 3000]",
  booleans: ["demo"],
  async run(flags: Flags): Promise<number> {
    const log = (line: string): void => void process.stdout.write(`tidemark up: ${line}\n`);
    const dataDir = resolve(flags.get("data") ?? "data");
    const started: Stoppable[] = [];
    let stopping: Promise<void> | undefined;
    const shutdown = (): Promise<void> => (stopping ??= stopAll(started, log));
    process.once("SIGINT", () => void shutdown());
    process.once("SIGTERM", () => void shutdown());
    try {
      const natsUrl = flags.get("nats") ?? (await startNats(dataDir, started, log));
      log(`data dir ${dataDir}`);
      const pids = Object.fromEntries(started.map((s) => [s.name, s.pid]));
      process.stdout.write(readyLine({ nats: natsUrl, data: dataDir, pids }) + "\n");
    } catch (err) {
      log(`failed: ${(err as Error).message}`);
      await shutdown();
      return 1;
    }
    await Promise.race([new Promise<void>((r) => process.once("SIGINT", r).once("SIGTERM", r)), ...started.map((s) => s.exited)]);
    await shutdown();
    log("stopped; data left in place");
    return 0;
  },
};

async function startNats(dataDir: string, started: Stoppable[], log: (line: string) => void): Promise<string> {
  const port = await preferredOrFreePort(4222);
  const monitorPort = await preferredOrFreePort(8222);
  const nats = await spawnNatsServer({ port, monitorPort, storeDir: resolve(dataDir, "nats") });
  started.push({ name: "nats-server", pid: nats.pid, exited: nats.exited, stop: () => nats.stop() });
  log(`started nats-server pid ${nats.pid} at ${nats.url} (monitor ${nats.monitorUrl}, store ${nats.storeDir})`);
  return nats.url;
}
