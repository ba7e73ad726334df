/**
 * The error of one configuration field (docs/decisions/0046-layered-config.md): it names the field,
 * the source its value came from (a flag, a TIDEMARK_* variable, the config file, a default), what
 * is allowed and what was found. A role turns it into its own coded error (`describeFieldError`),
 * keeping its stable code.
 */
import type { SettingSource } from "./setting-source.js";

export class ConfigFieldError extends Error {
  readonly code = "TM_CONFIG_INVALID";
  constructor(
    /** The field, as a reader of docs/operations.md knows it: `engine.checkpointEvery`. */
    readonly field: string,
    readonly source: SettingSource,
    /** What is allowed, e.g. `a whole number from 1 to 64`. */
    readonly expected: string,
    readonly got: unknown,
  ) {
    super(`${subjectOf(field, source)} ${requirementOf(expected, got)}`);
    this.name = "ConfigFieldError";
  }

  /** `must be <expected>, got <value>`: the part after the subject, for roles that frame it their way. */
  get requirement(): string {
    return requirementOf(this.expected, this.got);
  }
}

/**
 * Who the message is about: the file's own path (`tidemark.config.json: engine.idleTimeout`) for
 * a file value, else the field and the flag or variable it came from
 * (`engine.idleTimeout from TIDEMARK_IDLE_TIMEOUT`).
 */
export function subjectOf(field: string, source: SettingSource): string {
  return source.kind === "file" ? source.name : `${field} from ${source.name}`;
}

/** Pass as `got` for a secret (a token, a password): the message then leaves the value out. */
export const SECRET_VALUE: unique symbol = Symbol("secret value");

function requirementOf(expected: string, got: unknown): string {
  if (got === SECRET_VALUE) return `must be ${expected} (the value is a secret, not shown)`;
  return `must be ${expected}, got ${show(got)}`;
}

/** A value as the user wrote it, cut to 80 characters. */
export function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
