/**
 * Session window configuration (docs/semantics.md, "Session windows"): the inactivity gap, the
 * length cap, and the window of the derived per-service metrics. Parsed once; durations are
 * "60s"-style strings or ms.
 */
import { configDuration } from "../duration.js";
import { ConfigError } from "../errors.js";

export interface SessionConfig {
  /** Two events of one (service, user) less than this apart belong to one session. */
  gapMs: number;
  /** Length cap: sessions are cut at multiples of this in event time (docs/decisions/0009). */
  maxLengthMs: number;
  /** Tumbling window of the derived metrics (sessions ended per window, by session end). */
  metricsWindowMs: number;
}

export const DEFAULT_SESSION_CONFIG: Readonly<SessionConfig> = Object.freeze({
  gapMs: 60_000,
  maxLengthMs: 4 * 3_600_000,
  metricsWindowMs: 60_000,
});

const FIELDS: Record<keyof SessionConfig, string> = {
  gapMs: "gap",
  maxLengthMs: "maxLength",
  metricsWindowMs: "metricsWindow",
};

function duration(v: unknown, path: string): number {
  const ms = configDuration(v, path, "60s");
  if (!(ms > 0 && Number.isSafeInteger(ms)))
    throw new ConfigError(path, `must be a whole number of ms greater than 0, got ${JSON.stringify(v)}`);
  return ms;
}

/**
 * Validates and freezes a session config; missing fields take the defaults. Accepts `gapMs` or
 * `gap` (and likewise for the others). Errors name the path under `sessions`.
 */
export function validateSessionConfig(input: unknown = {}): Readonly<SessionConfig> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new ConfigError("sessions", `expected an object {"gap": "60s", "maxLength": "4h", "metricsWindow": "60s"}`);
  const o = input as Record<string, unknown>;
  const out = { ...DEFAULT_SESSION_CONFIG };
  for (const key of Object.keys(FIELDS) as (keyof SessionConfig)[]) {
    const short = FIELDS[key];
    const v = o[key] ?? o[short];
    if (v !== undefined) out[key] = duration(v, `sessions.${short}`);
  }
  if (out.maxLengthMs < out.gapMs)
    throw new ConfigError(
      "sessions.maxLength",
      `must be at least the gap (${out.gapMs} ms), got ${out.maxLengthMs} ms`,
    );
  return Object.freeze(out);
}
