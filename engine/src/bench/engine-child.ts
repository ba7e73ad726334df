/**
 * `node dist/bench/engine-child.js <nats url> <data dir> <events> <endTs> <flags JSON>`: one engine
 * in a process of its own, as a worker runs (docs/decisions/0051-engine-young-generation.md): an
 * untimed run first (its code then optimized, as in a running engine), then the timed one, each
 * until every event is through the core and every pane acknowledged (runtime-engine-run.ts).
 * Prints `{ warm, timed }` as one JSON line and exits.
 */
import { join } from "node:path";
import { engineRun } from "./runtime-engine-run.js";

const [url, data, events, endTs, flags] = process.argv.slice(2) as [string, string, string, string, string];
const run = (name: string) =>
  engineRun(url, join(data, name), Number(events), Number(endTs), false, JSON.parse(flags) as Record<string, string>);
const warm = await run("warm");
const timed = await run("timed");
process.stdout.write(JSON.stringify({ warm, timed }) + "\n");
process.exit(0);
