import { DeployError } from "./errors.js";

/** Parsed command-line flags: `--name value`, `--name=value`, bare `--flag`, `--no-flag`. */
export interface Flags {
  /** Last value of a flag, or undefined. */
  get(name: string): string | undefined;
  /** Every value of a repeatable flag (e.g. `--policy`). */
  all(name: string): string[];
  /** True for `--name`, false for `--no-name`, else `fallback`. */
  bool(name: string, fallback: boolean): boolean;
  /** Integer flag within [min, max]; throws TM_CLI_BAD_FLAG naming the flag otherwise. */
  int(name: string, fallback: number, min?: number, max?: number): number;
  /** The value, or TM_CLI_MISSING_FLAG saying what to pass. */
  required(name: string, hint: string): string;
  readonly positional: readonly string[];
}

export function parseFlags(argv: readonly string[], booleans: readonly string[] = []): Flags {
  const values = new Map<string, string[]>();
  const positional: string[] = [];
  const push = (k: string, v: string): void => {
    const list = values.get(k) ?? [];
    list.push(v);
    values.set(k, list);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    if (eq > 0) push(arg.slice(2, eq), arg.slice(eq + 1));
    else if (arg.startsWith("--no-")) push(arg.slice(5), "false");
    else if (booleans.includes(arg.slice(2)) || i + 1 >= argv.length || (argv[i + 1] ?? "").startsWith("--"))
      push(arg.slice(2), "true");
    else push(arg.slice(2), argv[++i] ?? "");
  }
  const get = (name: string): string | undefined => values.get(name)?.at(-1);
  return {
    get,
    all: (name) => values.get(name) ?? [],
    bool: (name, fallback) => {
      const v = get(name);
      return v === undefined ? fallback : v !== "false";
    },
    int: (name, fallback, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) => {
      const v = get(name);
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max)
        throw new DeployError("TM_CLI_BAD_FLAG", `--${name} must be a whole number from ${min} to ${max}, got "${v}"`);
      return n;
    },
    required: (name, hint) => {
      const v = get(name);
      if (v === undefined || v === "true")
        throw new DeployError("TM_CLI_MISSING_FLAG", `--${name} is required: ${hint}`);
      return v;
    },
    positional,
  };
}
