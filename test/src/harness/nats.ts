import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnNatsServer, type NatsServerProcess } from "@tidemark/deploy";

/** A throwaway nats-server with JetStream on a free loopback port and a temp store. */
export interface TestNats {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** PID of the running server (changes after restart). */
  pid(): number;
  /** Stop (SIGTERM, then SIGKILL) and start again on the same port and store. */
  restart(): Promise<void>;
  /** Stop the server only, keeping the store (use restart() or start() to bring it back). */
  kill(): Promise<void>;
  /** Start again after kill(), same port and store. */
  start(): Promise<void>;
  /** Stop the server and remove the temp store. */
  stop(): Promise<void>;
}

export async function startTestNats(): Promise<TestNats> {
  const storeDir = mkdtempSync(join(tmpdir(), "tidemark-nats-"));
  const port = await freePort();
  let proc: NatsServerProcess | undefined = await launch(port, storeDir);
  const start = async (): Promise<void> => {
    proc ??= await launch(port, storeDir);
  };
  const kill = async (): Promise<void> => {
    await proc?.stop();
    proc = undefined;
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    pid: () => proc?.pid ?? -1,
    kill,
    start,
    restart: async () => {
      await kill();
      await start();
    },
    stop: async () => {
      await kill();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

async function launch(port: number, storeDir: string): Promise<NatsServerProcess> {
  return spawnNatsServer({ port, storeDir: join(storeDir, "js") });
}
