/** One `tidemark load` run against a stack: its done line, and the ledger it wrote (docs/operations.md, "`tidemark load`"). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnTidemark } from "../harness/processes.js";
import type { Stack } from "./stack.js";

const DONE = "tidemark load done ";

export interface LoadDone {
  accepted: number;
  acceptedPerSec: number;
  http5xx: number;
  http4xx: number;
  retries: number;
  shed: number;
  httpP99Ms: number;
  exact: boolean;
}

export interface Ledger {
  windowMs: number;
  services: Record<string, Record<string, { count: number; errors: number }>>;
}

export async function runLoad(
  stack: Stack,
  dir: string,
  name: string,
  rate: number,
  seconds: number,
  users: number,
): Promise<{ done: LoadDone; ledger: Ledger }> {
  const accepted = join(dir, `${name}.accepted.json`);
  const load = spawnTidemark(
    [
      "load",
      ...[
        "--rate",
        String(rate),
        "--duration",
        `${seconds}s`,
        "--users",
        String(users),
        "--seed",
        String(rate + seconds),
      ],
      ...[
        "--ingest",
        String(stack.ready.ingest),
        "--token",
        String(stack.ready.token),
        "--nats",
        String(stack.ready.nats),
      ],
      ...["--accepted", accepted],
    ],
    { env: { TIDEMARK_NATS_TOKEN: String(stack.ready.natsToken) } },
  );
  const code = await load.exited;
  if (code !== 0) throw new Error(`tidemark load ${name} exited with ${code}:\n${load.output().slice(-2000)}`);
  const line =
    load
      .output()
      .split("\n")
      .find((l) => l.startsWith(DONE)) ?? "";
  return {
    done: JSON.parse(line.slice(DONE.length)) as LoadDone,
    ledger: JSON.parse(readFileSync(accepted, "utf8")) as Ledger,
  };
}

/** Ledgers of several runs added up per (service, window start). */
export function addLedgers(ledgers: readonly Ledger[]): Map<string, { count: number; errors: number }> {
  const out = new Map<string, { count: number; errors: number }>();
  for (const l of ledgers)
    for (const [service, windows] of Object.entries(l.services))
      for (const [start, c] of Object.entries(windows)) {
        const key = `${service}|${start}`;
        const sum = out.get(key) ?? { count: 0, errors: 0 };
        sum.count += c.count;
        sum.errors += c.errors;
        out.set(key, sum);
      }
  return out;
}
