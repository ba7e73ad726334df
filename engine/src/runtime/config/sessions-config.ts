/**
 * The engine's `sessions` setting (docs/decisions/0009-session-windows.md, "Live path";
 * docs/decisions/0034-sessions-at-scale.md): off by default in `tidemark engine` (`tidemark up` turns
 * it on); on with `--sessions`, `TIDEMARK_SESSIONS=1` or `engine.sessions.enabled: true`. Gap, length
 * cap and key cap come from `--session-gap` / `TIDEMARK_SESSION_GAP` / `engine.sessions.gap` (default
 * 60 s), `--session-max-length` / `TIDEMARK_SESSION_MAX_LENGTH` / `engine.sessions.maxLength` (4 h)
 * and `--session-max-keys` / `TIDEMARK_SESSION_MAX_KEYS` / `engine.sessions.maxKeys` (1,000,000).
 * Validated once, by the session operator's own validator, even when off (a bad gap is reported
 * before someone turns sessions on).
 */
import { ConfigError, validateSessionConfig, type SessionConfig } from "../../core/index.js";
import { ConfigFieldError, onOff } from "../../config/index.js";
import { RuntimeError, badSetting as bad } from "../errors.js";

/** One setting resolved across flag, env and file (`@tidemark/engine/config`), with where it came from. */
export type SettingLookup = (key: string) => { v: unknown; where: string };

const FILE_KEYS = ["enabled", "gap", "maxLength", "maxKeys"];

/** The validated session settings when sessions are on, else null. */
export function parseSessionsSetting(
  raw: unknown,
  fileName: string,
  lookup: SettingLookup,
): Readonly<SessionConfig> | null {
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw)))
    throw bad(
      `${fileName}: engine.sessions`,
      `an object such as {"enabled": true, "gap": "60s", "maxLength": "4h"}`,
      raw,
    );
  const o = (raw ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!FILE_KEYS.includes(k))
      throw bad(`${fileName}: engine.sessions.${k}`, `one of the known keys (${FILE_KEYS.join(", ")})`, k);
  const enabled = lookup("sessions");
  const gap = lookup("sessionGap");
  const maxLength = lookup("sessionMaxLength");
  const maxKeys = lookup("sessionMaxKeys");
  const unset = (x: { v: unknown; where: string }, name: string, flag: string, env: string): string =>
    x.v === undefined ? `the default ${name} (set --${flag}, ${env} or engine.sessions.${name})` : x.where;
  const where: Record<string, string> = {
    "sessions.gap": unset(gap, "gap", "session-gap", "TIDEMARK_SESSION_GAP"),
    "sessions.maxLength": unset(maxLength, "maxLength", "session-max-length", "TIDEMARK_SESSION_MAX_LENGTH"),
    "sessions.maxKeys": unset(maxKeys, "maxKeys", "session-max-keys", "TIDEMARK_SESSION_MAX_KEYS"),
  };
  let valid: Readonly<SessionConfig>;
  try {
    valid = validateSessionConfig({ gap: gap.v, maxLength: maxLength.v, maxKeys: maxKeys.v });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const why = err.message.startsWith(`${err.path}: `) ? err.message.slice(err.path.length + 2) : err.message;
    throw new RuntimeError("TM_ENGINE_BAD_CONFIG", `${where[err.path] ?? err.path}: ${why}`);
  }
  return flag(enabled) ? valid : null;
}

function flag(x: { v: unknown; where: string }): boolean {
  if (x.v === undefined) return false;
  try {
    return onOff()(x.v, "engine.sessions.enabled", { kind: "option", name: x.where });
  } catch (err) {
    if (err instanceof ConfigFieldError) throw bad(x.where, err.expected, x.v);
    throw err;
  }
}
