import { DEFAULT_SIMULATION, parseDuration, simulate as generate, type SimulationOptions } from "@tidemark/engine/core";
import { encodeEventBatch } from "@tidemark/engine/protocol";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { DeployError } from "../errors.js";

function duration(flags: Flags, name: string, fallback: number): number {
  const v = flags.get(name);
  if (v === undefined) return fallback;
  try {
    return parseDuration(v);
  } catch {
    throw new DeployError("TM_CLI_BAD_FLAG", `--${name} must be a duration such as 500ms, 2s, 90s, got "${v}"`);
  }
}

function fraction(flags: Flags, name: string, fallback: number): number {
  const v = flags.get(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new DeployError("TM_CLI_BAD_FLAG", `--${name} must be a number from 0 to 1, got "${v}"`);
  return n;
}

/** Reads the flags into simulation options (defaults: the seed's stream). */
export function simulationOptions(flags: Flags): SimulationOptions {
  const d = DEFAULT_SIMULATION;
  const o: SimulationOptions = {
    seed: flags.int("seed", d.seed, 0, 2 ** 32 - 1),
    events: flags.int("events", d.events, 0, 50_000_000),
    spanMs: duration(flags, "span", d.spanMs),
    services: flags.int("services", d.services, 1, 100_000),
    tail: fraction(flags, "tail", d.tail),
    meanDelayMs: duration(flags, "mean-delay", d.meanDelayMs),
    tailMaxMs: duration(flags, "tail-max", d.tailMaxMs),
    corr: fraction(flags, "corr", d.corr),
    startMs: flags.int("start", d.startMs, 0, 8.64e15),
    routes: flags.int("routes", d.routes, 1, 100_000),
    users: flags.int("users", d.users, 1, 100_000_000),
  };
  if (o.spanMs <= 0) throw new DeployError("TM_CLI_BAD_FLAG", "--span must be greater than 0, e.g. 600s");
  if (o.corr > 0.98)
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      "--corr is the extra error probability of tail events on top of 2%: at most 0.98",
    );
  return o;
}

/** `tidemark simulate`: the seed's stream as a recording on stdout, deterministic for a seed. */
export const simulate: Command = {
  summary: "write the seed's stream (delays with a late tail, optional late/error correlation) as an NDJSON recording",
  usage:
    "tidemark simulate [--seed 1] [--events 20000] [--span 600s] [--services 4] [--tail 0.08] [--mean-delay 2s] [--tail-max 90s] [--corr 0] [--routes 5] [--users 500] [--start MS] > rec.ndjson",
  async run(flags: Flags): Promise<number> {
    const events = generate(simulationOptions(flags));
    // A reader that stops early (`| head`) closes the pipe: stop writing, quietly.
    let closed = false;
    const onError = (e: NodeJS.ErrnoException): void => {
      if (e.code !== "EPIPE") throw e;
      closed = true;
      process.stdout.emit("drain");
    };
    process.stdout.on("error", onError);
    const CHUNK = 10_000;
    for (let i = 0; i < events.length && !closed; i += CHUNK) {
      const body = encodeEventBatch(events.slice(i, i + CHUNK));
      if (!process.stdout.write(body) && !closed)
        await new Promise<void>((r) => process.stdout.once("drain", () => r()));
    }
    return 0;
  },
};
