/**
 * Readers of one configuration field (docs/decisions/0046-layered-config.md): each takes the raw
 * value (a string from a flag or variable, a JSON value from the file), the field and its source,
 * and returns the parsed value or throws ConfigFieldError naming all three and what is allowed.
 */
import { parseDuration } from "../core/duration.js";
import { ConfigFieldError } from "./config-field-error.js";
import type { SettingSource } from "./setting-source.js";

export type FieldReader<T> = (raw: unknown, field: string, source: SettingSource) => T;

/**
 * A whole number in [min, max]; strings are read as numbers ("8", not "8x" or "") unless
 * `fromText` is false (a JSON document's typed numbers).
 */
export function integer(min: number, max: number, fromText = true): FieldReader<number> {
  return (raw, field, source) => {
    const n = fromText && typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
    if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
      throw new ConfigFieldError(field, source, `a whole number from ${min} to ${max}`, raw);
    return n;
  };
}

/** A finite number in [min, max]; strings read as numbers unless `fromText` is false. */
export function number(min: number, max: number, fromText = true): FieldReader<number> {
  return (raw, field, source) => {
    const n = fromText && typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
    if (typeof n !== "number" || !Number.isFinite(n) || n < min || n > max)
      throw new ConfigFieldError(field, source, `a number from ${min} to ${max}`, raw);
    return n;
  };
}

/** A duration ("500ms", "10s", "1m", "1h", or a number of ms) of at least `min` ms, in ms. */
export function duration(min = 0): FieldReader<number> {
  const expected = `a duration such as "500ms", "10s", "1m", "1h" or a number of milliseconds${min > 0 ? ` (at least ${min} ms)` : ""}`;
  return (raw, field, source) => {
    let ms = NaN;
    try {
      if (typeof raw === "string" || typeof raw === "number") ms = parseDuration(raw);
    } catch {
      // the coded error below names the field
    }
    if (!(ms >= min)) throw new ConfigFieldError(field, source, expected, raw);
    return ms;
  };
}

/** A non-empty string, matching `pattern` when given (`expected` says what it must look like). */
export function text(pattern?: RegExp, expected?: string): FieldReader<string> {
  const allowed = expected ?? (pattern ? `a string matching ${pattern.source}` : "a non-empty string");
  return (raw, field, source) => {
    if (typeof raw !== "string" || raw === "" || (pattern && !pattern.test(raw)))
      throw new ConfigFieldError(field, source, allowed, raw);
    return raw;
  };
}

/** One of `values`, written exactly. */
export function oneOf<T extends string>(values: readonly T[]): FieldReader<T> {
  const expected = `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;
  return (raw, field, source) => {
    if (!(values as readonly unknown[]).includes(raw)) throw new ConfigFieldError(field, source, expected, raw);
    return raw as T;
  };
}

const ON = ["1", "true", "on", "yes"];
const OFF = ["0", "false", "off", "no"];

/** On or off: true/false in the file; 1/true/on/yes or 0/false/off/no (any case) in flags and variables. */
export function onOff(): FieldReader<boolean> {
  return (raw, field, source) => {
    if (typeof raw === "boolean") return raw;
    const s = typeof raw === "string" ? raw.trim().toLowerCase() : undefined;
    if (s !== undefined && ON.includes(s)) return true;
    if (s !== undefined && OFF.includes(s)) return false;
    throw new ConfigFieldError(field, source, `on or off (${[...ON, ...OFF].join(", ")})`, raw);
  };
}

/** A list of strings: a JSON array in the file, a comma list in flags and variables (blanks dropped). */
export function list(): FieldReader<string[]> {
  return (raw, field, source) => {
    if (typeof raw === "string")
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    if (Array.isArray(raw) && raw.every((s) => typeof s === "string")) return [...(raw as string[])];
    throw new ConfigFieldError(field, source, "a list of strings (or a comma-separated string)", raw);
  };
}

/**
 * One URL of `schemes` (`nats://127.0.0.1:4222`), or with `several` a comma list of them (any
 * server of a cluster is enough to join it). `what` names it in messages ("a NATS URL").
 */
export function url(schemes: readonly string[], opts: { several?: boolean; what?: string } = {}): FieldReader<string> {
  const one = `(${schemes.join("|")}):\\/\\/[^\\s,]+`;
  const pattern = new RegExp(opts.several ? `^${one}(\\s*,\\s*${one})*$` : `^${one}$`);
  const what = `${opts.what ?? "a URL"} such as ${schemes[0] ?? "nats"}://127.0.0.1:4222`;
  return text(pattern, opts.several ? `${what}, or a comma list of them` : what);
}

/** A file path, or null for none (null or "" in any layer). */
export function optionalPath(): FieldReader<string | null> {
  return (raw, field, source) => {
    if (raw === null || raw === "") return null;
    if (typeof raw !== "string") throw new ConfigFieldError(field, source, "a file path", raw);
    return raw;
  };
}
