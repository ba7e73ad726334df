/**
 * `node [node options] dist/bench/engine-child.js <nats url> <data dir> <events> <end ts> [flags JSON]`:
 * one engine run of the runtime benchmark (runtime-engine-run.ts) in a process of its own, so a row
 * can run the engine under other Node options than the benchmark's process (runtime-held-out.ts:
 * without ENGINE_NODE_FLAGS, docs/decisions/0051-engine-young-generation.md). As in the benchmark's
 * process, an untimed run on fresh pane streams comes first (a running engine's code is
 * optimized); prints the timed run's EngineRun as one JSON line.
 */
import { join } from "node:path";
import { engineRun } from "./runtime-engine-run.js";

async function main(): Promise<void> {
  const [url, data, events, endTs, flags] = process.argv.slice(2);
  if (url === undefined || data === undefined || events === undefined || endTs === undefined)
    throw new Error("usage: engine-child.js <nats url> <data dir> <events> <end ts> [flags JSON]");
  const extra = JSON.parse(flags ?? "{}") as Record<string, string>;
  await engineRun(url, join(data, "warm"), Number(events), Number(endTs), false, extra);
  const run = await engineRun(url, join(data, "timed"), Number(events), Number(endTs), false, extra);
  process.stdout.write(JSON.stringify(run) + "\n");
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
