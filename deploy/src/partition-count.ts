import type { Flags } from "./args.js";
import { DeployError } from "./errors.js";

/**
 * The partition count P of TM_EVENTS is `--partition-count N` on every command, and only
 * `tidemark engine --partitions` names a set of partitions, the ones it owns (docs/operations.md,
 * "Configuration"). The count's old spelling, `--partitions N`, is refused naming the new flag.
 */
export function refuseCountAsPartitions(flags: Flags, command: string): void {
  const old = flags.get("partitions");
  if (old === undefined) return;
  throw new DeployError(
    "TM_CLI_BAD_FLAG",
    `tidemark ${command}: --partitions is now --partition-count (the partition count of TM_EVENTS; ` +
      `--partitions names the set an engine owns): write --partition-count ${old}`,
  );
}

/** `--partition-count`, else TIDEMARK_PARTITION_COUNT, else `fallback`; 1 to 4096. */
export function partitionCountOf(flags: Flags, env: NodeJS.ProcessEnv, fallback: number): number {
  if (flags.get("partition-count") !== undefined) return flags.int("partition-count", fallback, 1, 4096);
  const v = env.TIDEMARK_PARTITION_COUNT;
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 4096)
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      `TIDEMARK_PARTITION_COUNT must be a whole number from 1 to 4096, got "${v}"`,
    );
  return n;
}
