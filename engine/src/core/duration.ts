/**
 * Durations as written in flags, config and query strings: `500ms`, `10s`, `1m`, `1h`
 * (docs/semantics.md, "Configuration"). A bare number is milliseconds.
 */
import { ConfigError } from "./errors.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;

export class DurationError extends Error {
  readonly code = "TM_DURATION_INVALID";
  constructor(readonly input: string) {
    super(`"${input}" is not a duration: write a number with a unit, e.g. 500ms, 10s, 1m, 1h`);
  }
}

/** Parses a duration to whole milliseconds. Throws DurationError on anything else. */
export function parseDuration(input: string | number): number {
  if (typeof input === "number") {
    if (!Number.isFinite(input) || input < 0) throw new DurationError(String(input));
    return Math.round(input);
  }
  const m = PATTERN.exec(input.trim());
  if (!m) throw new DurationError(input);
  const unit = UNIT_MS[m[2] ?? "ms"] ?? 1;
  return Math.round(Number(m[1]) * unit);
}

/** Formats milliseconds the way parseDuration reads them, choosing the largest exact unit. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A config field's duration (a "10s"-style string or ms); ConfigError naming `path` otherwise.
 * `example` is the duration the error message suggests (e.g. "10s").
 */
export function configDuration(v: unknown, path: string, example: string): number {
  if (typeof v !== "string" && typeof v !== "number")
    throw new ConfigError(
      path,
      `expected a duration such as "${example}" or a number of milliseconds, got ${JSON.stringify(v)}`,
    );
  try {
    return parseDuration(v);
  } catch (e) {
    if (e instanceof DurationError) throw new ConfigError(path, e.message);
    throw e;
  }
}
