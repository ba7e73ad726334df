/**
 * Session window configuration (docs/semantics.md, "Session windows"): the inactivity gap, the
 * length cap, and the cap on (service, user) keys held. Parsed once; durations are "60s"-style
 * strings or ms.
 */
import { configDuration } from "../duration.js";
import { ConfigError } from "../errors.js";

export interface SessionConfig {
  /** Two events of one (service, user) less than this apart belong to one session. */
  gapMs: number;
  /** Length cap: sessions are cut at multiples of this in event time (docs/decisions/0009). */
  maxLengthMs: number;
  /** At most this many (service, user) keys are held; events of further keys are counted, not sessionized. */
  maxKeys: number;
}

export const DEFAULT_SESSION_CONFIG: Readonly<SessionConfig> = Object.freeze({
  gapMs: 60_000,
  maxLengthMs: 4 * 3_600_000,
  maxKeys: 1_000_000,
});

function duration(v: unknown, path: string): number {
  const ms = configDuration(v, path, "60s");
  if (!(ms > 0 && Number.isSafeInteger(ms)))
    throw new ConfigError(path, `must be a whole number of ms greater than 0, got ${JSON.stringify(v)}`);
  return ms;
}

function count(v: unknown, path: string): number {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !(Number.isSafeInteger(n) && n >= 1))
    throw new ConfigError(
      path,
      `must be a whole number of keys of at least 1 (e.g. 1000000), got ${JSON.stringify(v)}`,
    );
  return n;
}

/**
 * Validates and freezes a session config; missing fields take the defaults. Accepts `gapMs` or
 * `gap` (and likewise `maxLengthMs` or `maxLength`). Errors name the path under `sessions`.
 */
export function validateSessionConfig(input: unknown = {}): Readonly<SessionConfig> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new ConfigError("sessions", `expected an object {"gap": "60s", "maxLength": "4h", "maxKeys": 1000000}`);
  const o = input as Record<string, unknown>;
  if (o.metricsWindow !== undefined || o.metricsWindowMs !== undefined)
    throw new ConfigError(
      "sessions.metricsWindow",
      "is no longer read: session panes use the engine's tumbling windows (remove the key)",
    );
  const out = { ...DEFAULT_SESSION_CONFIG };
  const gap = o.gapMs ?? o.gap;
  if (gap !== undefined) out.gapMs = duration(gap, "sessions.gap");
  const maxLength = o.maxLengthMs ?? o.maxLength;
  if (maxLength !== undefined) out.maxLengthMs = duration(maxLength, "sessions.maxLength");
  if (o.maxKeys !== undefined) out.maxKeys = count(o.maxKeys, "sessions.maxKeys");
  if (out.maxLengthMs < out.gapMs)
    throw new ConfigError(
      "sessions.maxLength",
      `must be at least the gap (${out.gapMs} ms), got ${out.maxLengthMs} ms`,
    );
  return Object.freeze(out);
}
