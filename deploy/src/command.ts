import type { Flags } from "./args.js";

/** One `tidemark` subcommand. `run` resolves to the process exit code. */
export interface Command {
  readonly summary: string;
  readonly usage: string;
  /** Flags that never take a value. */
  readonly booleans?: readonly string[];
  run(flags: Flags): Promise<number>;
}
