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
  /** OTLP/gRPC port passed to ingest; undefined: ingest's own (config file, env, default; docs/ingest.md). */
  readonly grpcPort?: number;
  readonly dashboardPort: number;
  /** Engine workers (`--workers`), each owning a contiguous range of the partitions. */
  readonly workers: number;
  /** Merge operators: one per merge partition (top-level `mergePartitions`, docs/decisions/0033-merge-partitions.md). */
  readonly mergePartitions: number;
}

/** The file's or TIDEMARK_MERGE_PARTITIONS' merge partition count (validated with the roles; 1 until then). */
export function mergePartitionsOf(config: TidemarkConfig, env: NodeJS.ProcessEnv): number {
  const n = Number(env.TIDEMARK_MERGE_PARTITIONS || (config.document.mergePartitions ?? 1));
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Workers `up` runs by default: one per two cores (a merge operator and the other roles share the rest), at least one. */
export function defaultWorkers(partitionCount: number, cores: number): number {
  return Math.max(1, Math.min(partitionCount, Math.floor(cores / 2)));
}

/** The partitions of worker `i` of `n` over `count`: a contiguous range such as "0-3". */
export function workerPartitions(count: number, n: number, i: number): string {
  const from = Math.floor((i * count) / n);
  const to = Math.floor(((i + 1) * count) / n) - 1;
  return from === to ? String(from) : `${from}-${to}`;
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
    ...(ctx.grpcPort === undefined ? [] : ["--grpc-port", String(ctx.grpcPort)]),
    "--partition-count",
    String(ctx.config.core.partitions),
  ]);
}

/** What every stream-processing role (worker, merge operator) is given. */
function processorArgs(ctx: RoleContext, extra: string[]): string[] {
  return withConfig(ctx.config, [
    "--nats",
    ctx.natsUrl,
    "--data",
    ctx.config.data,
    "--partition-count",
    String(ctx.config.core.partitions),
    ...extra,
  ]);
}

/** Worker `i`'s flags: with several workers, its partitions, and any free metrics port past the first. */
export function engineArgs(ctx: RoleContext, i = 0): string[] {
  const split = ctx.workers > 1 ? ["--partitions", workerPartitions(ctx.config.core.partitions, ctx.workers, i)] : [];
  return processorArgs(ctx, [...split, ...(i > 0 ? ["--metrics-port", "0"] : [])]);
}

/** Merge operator `m`'s flags: with several merge partitions, the one it reads. */
export function mergeArgs(ctx: RoleContext, m = 0): string[] {
  return processorArgs(ctx, ctx.mergePartitions > 1 ? ["--merge-partition", String(m)] : []);
}

export function dashboardArgs(ctx: RoleContext): string[] {
  return withConfig(ctx.config, ["--nats", ctx.natsUrl, "--port", String(ctx.dashboardPort)]);
}

/** `tidemark remote-write` runs under `up` when the file's `remoteWrite.url` or TIDEMARK_REMOTE_WRITE_URL names a receiver (docs/remote-write.md). */
export function remoteWriteConfigured(config: TidemarkConfig, env: NodeJS.ProcessEnv): boolean {
  const section = config.document.remoteWrite as { url?: unknown } | undefined;
  return section?.url !== undefined || (env.TIDEMARK_REMOTE_WRITE_URL ?? "") !== "";
}

export function remoteWriteArgs(ctx: RoleContext): string[] {
  return withConfig(ctx.config, ["--nats", ctx.natsUrl, "--data", ctx.config.data]);
}

/** Parses every role's configuration exactly as the role will (throws the role's coded error). */
export async function validateRoles(ctx: RoleContext, env: NodeJS.ProcessEnv): Promise<void> {
  const { loadIngestConfig } = await import("@tidemark/ingest");
  const { parseEngineConfig, parseMergeConfig } = await import("@tidemark/engine/runtime");
  const { envConfig, readConfigFile, resolveConfig } = await import("@tidemark/dashboard");
  const file = ctx.config.file;
  loadIngestConfig({ configFile: file, env, flags: flagsOf(ingestArgs(ctx)) });
  for (let i = 0; i < ctx.workers; i++)
    parseEngineConfig({ file: ctx.config.document, fileName: file, env, flags: flagsOf(engineArgs(ctx, i)) });
  for (let m = 0; m < ctx.mergePartitions; m++)
    parseMergeConfig({ file: ctx.config.document, fileName: file, env, flags: flagsOf(mergeArgs(ctx, m)) });
  const d = flagsOf(dashboardArgs(ctx));
  resolveConfig(file === undefined ? {} : readConfigFile(file), envConfig(env), { nats: d.nats, port: d.port });
  if (remoteWriteConfigured(ctx.config, env)) {
    const rw = await import("@tidemark/dashboard");
    rw.resolveRemoteWriteConfig(
      { nats: ctx.natsUrl, dataDir: ctx.config.data, policies: ctx.config.core.policies },
      rw.remoteWriteFileLayer(ctx.config.document.remoteWrite, file ?? "config"),
      rw.remoteWriteEnvLayer(env),
    );
  }
}

/** `["--a", "1", "--b", "2"]` → `{ a: "1", b: "2" }` (the roles' config modules take flags so). */
function flagsOf(args: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (let i = 0; i + 1 < args.length; i += 2) out[(args[i] ?? "").replace(/^--/, "")] = args[i + 1];
  return out;
}
