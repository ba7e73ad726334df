import { parseFlags } from "./args.js";
import type { Command } from "./command.js";
import { DeployError } from "./errors.js";

/** Subcommands, loaded on demand so each role pulls in only its own dependencies. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  up: async () => (await import("./commands/up.js")).up,
  demo: async () => (await import("./commands/demo.js")).demo,
  load: async () => (await import("./commands/load.js")).load,
  ingest: async () => (await import("./commands/ingest.js")).ingest,
  dashboard: async () => (await import("./commands/dashboard.js")).dashboard,
  engine: async () => (await import("./commands/engine.js")).engine,
  merge: async () => (await import("./commands/merge.js")).merge,
  backfill: async () => (await import("./commands/backfill.js")).backfill,
  savepoint: async () => (await import("./commands/savepoint.js")).savepoint,
  frontier: async () => (await import("./commands/frontier.js")).frontier,
  simulate: async () => (await import("./commands/simulate.js")).simulate,
  "remote-write": async () => (await import("./commands/remote-write.js")).remoteWrite,
};

function help(): string {
  return [
    "usage: tidemark <command> [flags]",
    "",
    "commands:",
    ...Object.keys(COMMANDS).map((name) => `  ${name}`),
    "",
    "Flags accepted where they apply: --config FILE, --nats URL, --data DIR.",
    "Durations are written 500ms, 10s, 1m, 1h.",
  ].join("\n");
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(help() + "\n");
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) throw new DeployError("TM_CLI_UNKNOWN_COMMAND", `unknown command "${name}"\n${help()}`);
  const command = await load();
  const flags = parseFlags(rest, command.booleans);
  if (flags.bool("help", false)) {
    process.stdout.write(`${command.usage}\n  ${command.summary}\n`);
    return 0;
  }
  return command.run(flags);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e = err as { code?: string; message?: string };
    process.stderr.write(`tidemark: ${e.code ? `[${e.code}] ` : ""}${e.message ?? String(err)}\n`);
    process.exitCode = 2;
  },
);
