import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { runOperator } from "./operator-role.js";

/** `tidemark engine`: one engine worker over its owned partitions (docs/operations.md, "Engine workers"). */
export const engine: Command = {
  summary:
    "run an engine worker: TM_EVENTS → windows/policies → TM_PANES, TM_LATE; checkpoints in <data>/checkpoints/<worker>",
  usage:
    "tidemark engine [--partitions 0-3,6] [--worker ID] [--data DIR] [--nats URL] [--config FILE]\n" +
    "                [--checkpoint-every 5s] [--idle-timeout 10s] [--metrics-port 9464] [--partition-count 8]\n" +
    "                [--sessions [on|off]] [--session-gap 60s] [--session-max-length 4h] [--session-max-keys 1000000] [--partials on|off]\n" +
    "                [--partition-by service|service+route] [--max-in-flight 4096] [--max-in-flight-bytes 67108864]\n" +
    "                [--max-queued-events 65536] [--checkpoint-timeout 60s]",
  async run(flags: Flags): Promise<number> {
    const { ENGINE_FLAGS, parseEngineConfig, startEngine } = await import("@tidemark/engine/runtime");
    return runOperator(
      flags,
      { key: "engine", flags: ENGINE_FLAGS },
      parseEngineConfig,
      (c) => startEngine(c),
      (r) => ({ partitions: r.partitions }),
    );
  },
};
