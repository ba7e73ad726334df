/**
 * `TM_CORE_AB_BASE=<another engine dist> node dist/bench/core-ab.js [rounds]`: the core alone of this
 * dist and of another (e.g. a build of main copied aside) on the same held-out input (core-alone.ts,
 * the decoded events), in one process, alternating, after an untimed run of each; prints CPU per
 * event of each and this / base (docs/decisions/0050-state-layout.md). One process and alternating
 * runs, so the machine's load weighs on both alike.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CoreConfig } from "../core/index.js";
import type { TelemetryEvent } from "../protocol.js";
import { heldOutInput } from "./core-alone.js";
import { coreAlone } from "./runtime-baselines.js";

type CoreAlone = (events: readonly TelemetryEvent[], core: CoreConfig, endTs: number) => { ms: number };

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const baseDir = process.env.TM_CORE_AB_BASE;
  if (baseDir === undefined || baseDir === "")
    throw new Error("TM_CORE_AB_BASE: set it to another engine dist directory (the one holding bench/ and core/)");
  const url = pathToFileURL(resolve(baseDir, "bench/runtime-baselines.js")).href;
  const base = ((await import(url)) as { coreAlone: CoreAlone }).coreAlone;
  const rounds = Number(process.argv[2] ?? 8);
  if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error(`rounds: a whole number > 0, got ${process.argv[2]}`);
  const { decoded, config, endTs } = heldOutInput();
  const runs: Record<"base" | "this", CoreAlone> = { base, this: coreAlone };
  const cpu: Record<"base" | "this", number[]> = { base: [], this: [] };
  for (const f of Object.values(runs)) f(decoded, config, endTs);
  for (let i = 0; i < rounds; i++)
    for (const which of i % 2 === 0 ? (["base", "this"] as const) : (["this", "base"] as const)) {
      const c0 = process.cpuUsage();
      runs[which](decoded, config, endTs);
      const c = process.cpuUsage(c0);
      cpu[which].push(((c.user + c.system) * 1000) / decoded.length);
    }
  for (const which of ["base", "this"] as const)
    console.log(
      `${which.padEnd(4)} CPU ns/event: min ${Math.min(...cpu[which]).toFixed(0)}, median ${median(cpu[which]).toFixed(0)}`,
    );
  const ratio = (f: (xs: number[]) => number): string => (f(cpu.this) / f(cpu.base)).toFixed(3);
  console.log(`this / base: min ${ratio((xs) => Math.min(...xs))}, median ${ratio(median)} (${rounds} rounds)`);
}

await main();
