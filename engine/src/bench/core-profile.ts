/**
 * `node dist/bench/core-profile.js`: the core alone on the runtime benchmark's held-out workload
 * (runtime-held-out.ts), nothing else in the process, for `node --cpu-prof` (docs/decisions/0048-core-hot-path.md).
 * One untimed run on a fresh core, then TM_CORE_RUNS timed runs (default 3), each on a fresh core;
 * prints wall and CPU per event. TM_CORE_DIGEST=1 also prints a SHA-256 of every pane and late record
 * as JSON, in emission order: a change to the hot path must leave it as it was.
 */
import { createHash } from "node:crypto";
import { defaultCoreConfig } from "../core/index.js";
import type { TelemetryEvent } from "../protocol.js";
import { heldOutInput } from "./core-alone.js";
import { coreAlone, feedCore } from "./runtime-baselines.js";

function digest(events: readonly TelemetryEvent[], endTs: number): string {
  const h = createHash("sha256");
  const write = (r: unknown): void => void h.update(JSON.stringify(r) + "\n");
  feedCore(events, defaultCoreConfig(), endTs, { pane: write, late: write });
  return h.digest("hex");
}

function main(): void {
  const input = heldOutInput();
  const core = input.config;
  const endTs = input.endTs;
  const events = process.env.TM_CORE_EVENTS === "decoded" ? input.decoded : input.events;
  const n = events.length;
  if (process.env.TM_CORE_DIGEST === "1") process.stdout.write(`digest ${digest(events, endTs)}\n`);
  coreAlone(events, core, endTs);
  const runs = Number(process.env.TM_CORE_RUNS ?? 3);
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    const r = coreAlone(events, core, endTs);
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    process.stdout.write(
      `run ${i + 1}: ${r.ms.toFixed(0)} ms wall (${((r.ms * 1e6) / n).toFixed(0)} ns/event, ` +
        `${Math.round(n / (r.ms / 1000)).toLocaleString("en-US")} events/s), CPU ${cpuMs.toFixed(0)} ms ` +
        `(${((cpuMs * 1e6) / n).toFixed(0)} ns/event); ${r.panes} panes, ${r.late} late\n`,
    );
  }
}

main();
