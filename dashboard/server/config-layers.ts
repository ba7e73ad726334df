/**
 * The dashboard's file and environment layers (docs/websocket-protocol.md, "Configuration"), each
 * marked with its source so that config.ts's errors name the variable or file key a bad value
 * came from (`@tidemark/engine/config`, docs/decisions/0046-layered-config.md).
 */
import { readFileSync } from "node:fs";
import { validateCoreConfig } from "@tidemark/engine/core";
import { parseAlerts, scopeOf } from "./alerts/alerts-config.js";
import { ALERT_OVERRIDES, bad, ENV, fromSource } from "./config-values.js";
import { DashboardError } from "./errors.js";
import { parseSlos } from "./slo/slo-config.js";

/** One layer: setting → raw value (config.ts types and validates it). */
export type Layer = Record<string, unknown>;

/**
 * Reads the `dashboard` section of a JSON config file (tidemark.config.json), the NATS URL from
 * its top-level `nats` (`{ "url": … }`, or a plain URL string), and its top-level `alerts`,
 * validated against the file's `policies` and `windows`.
 */
export function fileLayer(path: string): Layer {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new DashboardError("TM_DASHBOARD_CONFIG_FILE", `cannot read config file ${path}: ${(err as Error).message}`);
  }
  const root = (json ?? {}) as Record<string, unknown>;
  const section = (root["dashboard"] ?? {}) as Layer;
  for (const secret of ["natsUser", "natsPassword", "natsToken"] as const)
    if (secret in section)
      bad(
        secret,
        "may not be set in a file",
        "pass NATS credentials in TIDEMARK_NATS_USER/TIDEMARK_NATS_PASSWORD or TIDEMARK_NATS_TOKEN",
      );
  for (const key of ["alerts", "slos", ...ALERT_OVERRIDES])
    if (key in section)
      bad(key, "belongs in the file's top-level alerts section", 'write "alerts": { … } at the top level');
  const alerts = root["alerts"] === undefined ? undefined : parseAlerts(root["alerts"], scopeOf(root, path), path);
  const slos =
    root["slos"] === undefined ? undefined : parseSlos(root["slos"], scopeOf(root, path), path, root["policies"]);
  const nats = root["nats"];
  const url = typeof nats === "object" && nats !== null ? (nats as Record<string, unknown>)["url"] : nats;
  const discarding = discardingIn(root["policies"], path);
  const layer: Layer = {
    ...(url === undefined ? {} : { nats: url }),
    ...(discarding.length === 0 ? {} : { discardingPolicies: discarding }),
    ...(alerts === undefined ? {} : { alerts }),
    ...(slos === undefined ? {} : { slos }),
    ...section,
  };
  return fromSource(layer, (key) =>
    key === "nats" && !("nats" in section) ? `nats.url in ${path}` : `dashboard.${key} in ${path}`,
  );
}

/** Names of the file's policies in discarding mode, validated by the core's own validator. */
function discardingIn(policies: unknown, path: string): string[] {
  if (policies === undefined) return [];
  try {
    return validateCoreConfig({ policies }, path)
      .policies.filter((p) => p.mode === "discarding")
      .map((p) => p.name);
  } catch (err) {
    throw new DashboardError(
      "TM_DASHBOARD_CONFIG_INVALID",
      `${(err as Error).message} (the dashboard reads the policies' modes for session metrics)`,
    );
  }
}

/** The environment's settings, by config-values.ts's names (a later name of one setting wins). */
export function envLayer(env: NodeJS.ProcessEnv, keys: Readonly<Record<string, string>> = ENV): Layer {
  const out: Layer = {};
  const names = new Map<string, string>();
  for (const [name, key] of Object.entries(keys))
    if (env[name] !== undefined) {
      out[key] = env[name];
      names.set(key, name);
    }
  return fromSource(out, (key) => names.get(key) ?? key);
}
