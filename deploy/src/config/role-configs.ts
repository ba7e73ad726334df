/**
 * Hands each role its part of the unified config. `tidemark up` passes every child the same
 * `--config FILE` and the values only it knows (NATS URL, ports, data dir, partition count) as
 * flags; each role's own config module layers defaults < file < TIDEMARK_* env < flags.
 * `validateRoles` runs those very modules in-process before anything starts, so an invalid
 * config stops `up` at once with the role's coded error naming the field.
 */
import type { TidemarkConfig } from "./tidemark-config.js";

export interface RoleContext {
  readonly config: TidemarkConfig;
  readonly natsUrl: string;
  readonly ingestPort: number;
  readonly dashboardPort: number;
}

function withConfig(config: TidemarkConfig, args: string[]): string[] {
  return config.file === undefined ? args : [...args, "--config", config.file];
}

export function ingestArgs(ctx: RoleContext): string[] {
  return withConfig(ctx.config, [
    "--nats",
    ctx.natsUrl,
    "--port",
    String(ctx.ingestPort),
    "--partition-count",
    String(ctx.config.core.partitions),
  ]);
}

export function engineArgs(ctx: RoleContext): string[] {
  return withConfig(ctx.config, [
    "--nats",
    ctx.natsUrl,
    "--data",
    ctx.config.data,
    "--partition-count",
    String(ctx.config.core.partitions),
  ]);
}

export function dashboardArgs(ctx: RoleContext): string[] {
  return withConfig(ctx.config, ["--nats", ctx.natsUrl, "--port", String(ctx.dashboardPort)]);
}

/** Parses every role's configuration exactly as the role will (throws the role's coded error). */
export async function validateRoles(ctx: RoleContext, env: NodeJS.ProcessEnv): Promise<void> {
  const { loadIngestConfig } = await import("@tidemark/ingest");
  const { parseEngineConfig } = await import("@tidemark/engine/runtime");
  const { envConfig, readConfigFile, resolveConfig } = await import("@tidemark/dashboard");
  const file = ctx.config.file;
  loadIngestConfig({ configFile: file, env, flags: flagsOf(ingestArgs(ctx)) });
  parseEngineConfig({ file: ctx.config.document, fileName: file, env, flags: flagsOf(engineArgs(ctx)) });
  const d = flagsOf(dashboardArgs(ctx));
  resolveConfig(file === undefined ? {} : readConfigFile(file), envConfig(env), { nats: d.nats, port: d.port });
}

/** `["--a", "1", "--b", "2"]` → `{ a: "1", b: "2" }` (the roles' config modules take flags so). */
function flagsOf(args: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (let i = 0; i + 1 < args.length; i += 2) out[(args[i] ?? "").replace(/^--/, "")] = args[i + 1];
  return out;
}
