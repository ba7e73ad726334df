/**
 * The flags of `tidemark load` (docs/operations.md, "`tidemark load`"), read with the config
 * file's field readers (config/fields.ts); a bad value is TM_CLI_BAD_FLAG naming the flag, what
 * is allowed and what was given. The environment is passed in.
 */
import type { Flags } from "../args.js";
import { Fields } from "../config/fields.js";
import { DeployError } from "../errors.js";

export interface LoadOptions {
  rate: number;
  durationMs: number;
  services: number;
  routes: number;
  users: number;
  senders: number;
  batch: number;
  seed: number;
  corr: number;
  windowMs: number;
  ingest: string;
  token: string | undefined;
  /** Where to read the engine's tm.status; undefined: no pipeline lag. */
  nats: string | undefined;
  accepted: string | undefined;
  record: string | undefined;
}

export const LOAD_DEFAULTS = {
  rate: 1000,
  durationMs: 30_000,
  services: 24,
  routes: 5,
  users: 20_000,
  senders: 4,
  batch: 500,
  seed: 1,
  corr: 0,
  windowMs: 10_000,
  ingest: "http://127.0.0.1:4318",
} as const;

/** Runs `read`; a TM_CONFIG_INVALID from the field readers becomes TM_CLI_BAD_FLAG. */
function asFlag<T>(name: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof DeployError && err.code === "TM_CONFIG_INVALID")
      throw new DeployError("TM_CLI_BAD_FLAG", `${err.message.replace(/^flags: /, "")}: write e.g. ${example(name)}`);
    throw err;
  }
}

export function readLoadOptions(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  natsFromConfig: string | undefined = undefined,
): LoadOptions {
  const f = new Fields("flags");
  const value = (name: string): string | undefined => {
    const v = flags.get(name);
    if (v === "true") throw new DeployError("TM_CLI_BAD_FLAG", `--${name} needs a value: write e.g. ${example(name)}`);
    return v;
  };
  const numeric = (v: string): unknown => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);
  const num = (name: string, fallback: number, min: number, max: number, int = false): number => {
    const v = value(name);
    if (v === undefined) return fallback;
    return asFlag(name, () => (int ? f.int : f.number).call(f, numeric(v), `--${name}`, min, max));
  };
  const duration = (name: string, fallback: number): number => {
    const v = value(name);
    const ms = v === undefined ? fallback : asFlag(name, () => f.durationMs(v, `--${name}`));
    if (ms < 1) throw new DeployError("TM_CLI_BAD_FLAG", `--${name} must be at least 1ms: write e.g. ${example(name)}`);
    return ms;
  };
  const d = LOAD_DEFAULTS;
  const token = value("token") ?? env.TIDEMARK_INGEST_TOKENS?.split(",")[0]?.trim();
  return {
    rate: num("rate", d.rate, 1, 1_000_000),
    durationMs: duration("duration", d.durationMs),
    services: num("services", d.services, 1, 10_000, true),
    routes: num("routes", d.routes, 1, 1000, true),
    users: num("users", d.users, 1, 10_000_000, true),
    senders: num("senders", d.senders, 1, 256, true),
    batch: num("batch", d.batch, 1, 50_000, true),
    seed: num("seed", d.seed, 0, 2 ** 32 - 1, true),
    corr: num("corr", d.corr, 0, 1),
    windowMs: duration("window", d.windowMs),
    ingest: url("ingest", value("ingest") ?? env.TIDEMARK_INGEST_URL ?? d.ingest, /^https?:$/),
    token: token === "" ? undefined : token,
    nats: natsUrl(value("nats") ?? natsFromConfig),
    accepted: value("accepted"),
    record: value("record"),
  };
}

function url(name: string, v: string, protocol: RegExp): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(v);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !protocol.test(parsed.protocol))
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      `--${name} must be ${name === "nats" ? "a nats:// URL" : "an http(s) URL"}, got "${v}": write e.g. ${example(name)}`,
    );
  return v.replace(/\/+$/, "");
}

/** A NATS URL or comma list, each nats:// or tls://. */
function natsUrl(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  for (const part of v.split(",")) url("nats", part.trim(), /^(nats|tls):$/);
  return v;
}

const EXAMPLES: Record<string, string> = {
  rate: "--rate 5000",
  duration: "--duration 30s",
  services: "--services 24",
  routes: "--routes 5",
  users: "--users 20000",
  senders: "--senders 4",
  batch: "--batch 500",
  seed: "--seed 7",
  corr: "--corr 0.3",
  window: "--window 10s",
  ingest: "--ingest http://127.0.0.1:4318",
  nats: "--nats nats://127.0.0.1:4222",
  token: "--token $TOKEN",
  accepted: "--accepted accepted.json",
  record: "--record accepted.ndjson",
};

function example(name: string): string {
  return EXAMPLES[name] ?? `--${name} VALUE`;
}
