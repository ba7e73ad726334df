/**
 * Readers for one field of the config file. Each takes the value and its JSON path
 * (`$.demo.rate`) and throws TM_CONFIG_INVALID naming the path, what is allowed, and what was
 * found. `source` names where the document came from (a file, or an environment variable).
 */
import { ConfigFieldError, duration, integer, number, show, text, type FieldReader } from "@tidemark/engine/config";
import { DeployError } from "../errors.js";

export type Json = Record<string, unknown>;

export function invalid(source: string, path: string, allowed: string, got: unknown): DeployError {
  return new DeployError("TM_CONFIG_INVALID", `${source}: ${path} must be ${allowed}, got ${show(got)}`);
}

export class Fields {
  constructor(readonly source: string) {}

  /** An object whose keys are all in `allowed` (a typo names the key and the allowed ones). */
  object(v: unknown, path: string, allowed: readonly string[]): Json {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid(this.source, path, "an object", v);
    for (const key of Object.keys(v)) {
      if (!allowed.includes(key))
        throw invalid(this.source, `${path}.${key}`, `one of the known keys (${allowed.join(", ")})`, key);
    }
    return v as Json;
  }

  /** Any object (a role section its own module validates). */
  record(v: unknown, path: string): Json {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid(this.source, path, "an object", v);
    return v as Json;
  }

  /** `v` through a shared field reader (`@tidemark/engine/config`); its error names this source and `path`. */
  read<T>(v: unknown, path: string, reader: FieldReader<T>): T {
    try {
      return reader(v, path, { kind: "file", name: `${this.source}: ${path}` });
    } catch (err) {
      if (err instanceof ConfigFieldError) throw invalid(this.source, path, err.expected, v);
      throw err;
    }
  }

  string(v: unknown, path: string, pattern?: RegExp, allowed = "a non-empty string"): string {
    return this.read(v, path, text(pattern, allowed));
  }

  int(v: unknown, path: string, min: number, max: number): number {
    return this.read(v, path, integer(min, max, false));
  }

  number(v: unknown, path: string, min: number, max: number): number {
    return this.read(v, path, number(min, max, false));
  }

  boolean(v: unknown, path: string): boolean {
    if (typeof v !== "boolean") throw invalid(this.source, path, "true or false", v);
    return v;
  }

  /** A duration: "500ms", "10s", "1m", "1h", or a number of ms. */
  durationMs(v: unknown, path: string): number {
    return this.read(v, path, duration(0));
  }

  stringList(v: unknown, path: string): string[] {
    if (!Array.isArray(v)) throw invalid(this.source, path, "a list of strings", v);
    return v.map((item, i) => this.string(item, `${path}[${i}]`));
  }

  /** `v` read by `read` when present, else `fallback`. */
  optional<T>(v: unknown, read: (v: unknown) => T, fallback: T): T {
    return v === undefined ? fallback : read(v);
  }
}
