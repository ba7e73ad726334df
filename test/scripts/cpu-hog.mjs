#!/usr/bin/env node
/**
 * Loads the machine's cores for a bounded time, then stops by itself: the "another job" under which
 * the integration package must stay green (docs/test-rigor-runs.md).
 *
 *   node test/scripts/cpu-hog.mjs [minutes=10] [workers=<cores>]
 *
 * It forks `workers` child processes that each spin until the deadline; the parent kills only
 * those children (by their own PIDs) on SIGINT/SIGTERM or at the deadline, and exits.
 */
import { fork } from "node:child_process";
import { availableParallelism } from "node:os";

const SPIN = "--spin-until";

if (process.argv[2] === SPIN) {
  const until = Number(process.argv[3]);
  let x = 0;
  while (Date.now() < until) for (let i = 0; i < 1e6; i++) x = (x * 31 + i) % 1_000_003;
  process.exit(x < 0 ? 1 : 0);
} else {
  const minutes = Number(process.argv[2] ?? 10);
  const workers = Number(process.argv[3] ?? availableParallelism());
  if (!(minutes > 0 && minutes <= 240)) throw new Error("minutes: give a number in (0, 240]");
  if (!(Number.isInteger(workers) && workers >= 1 && workers <= 16))
    throw new Error("workers: give an integer in [1, 16]");
  const until = Date.now() + minutes * 60_000;
  const children = Array.from({ length: workers }, () => fork(process.argv[1], [SPIN, String(until)]));
  console.log(
    `cpu-hog: ${workers} spinning until ${new Date(until).toISOString()}, pids ${children.map((c) => c.pid).join(" ")}`,
  );
  const stop = () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  setTimeout(stop, until - Date.now() + 1_000).unref();
  let left = children.length;
  for (const c of children) c.on("exit", () => --left === 0 && process.exit(0));
}
