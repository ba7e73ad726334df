/**
 * The nats-servers, connections and engine processes one test file starts, stopped together at its
 * end: engines still running are SIGKILLed (the tests that use it crash them on purpose), then the
 * connections close and the servers stop — only what this file started, by its own handles.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import { connectNats, startEngine } from "./engine-fixtures.js";

export class Fleet {
  private readonly servers: TestNats[] = [];
  private readonly conns: NatsConnection[] = [];
  private readonly engines: CliProcess[] = [];

  /** A fresh nats-server and a connection to it. */
  async natsServer(): Promise<{ nats: TestNats; nc: NatsConnection }> {
    const nats = await startTestNats();
    this.servers.push(nats);
    const nc = await connectNats(nats.url);
    this.conns.push(nc);
    return { nats, nc };
  }

  /** A `tidemark engine` process on `url` with its data in `data`. */
  engine(url: string, data: string, extra: string[] = []): CliProcess {
    const p = startEngine(url, data, extra);
    this.engines.push(p);
    return p;
  }

  async close(): Promise<void> {
    for (const e of this.engines) if (e.child.exitCode === null) e.child.kill("SIGKILL");
    for (const c of this.conns) await c.close();
    for (const s of this.servers) await s.stop();
  }
}

/** Checkpoint files of a worker's directory, newest (highest number) first, as paths. */
export function checkpointFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^checkpoint-\d+\.tmck$/.test(n))
    .sort()
    .reverse()
    .map((n) => join(dir, n));
}

/** The log time of the newest checkpoint in a worker's directory (−∞ when there is none). */
export function newestCheckpointLog(dir: string): number {
  const file = checkpointFiles(dir)[0];
  return file === undefined ? -Infinity : (decodeCheckpoint(readFileSync(file), file).header.logTime ?? -Infinity);
}
