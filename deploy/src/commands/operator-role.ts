import { resolve } from "node:path";
import type { Flags } from "../args.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/** What `tidemark engine` and `tidemark merge` share of a running operator. */
interface RunningOperator {
  readonly worker: string;
  readonly metricsUrl: string;
  readonly restoredFrom: string | undefined;
  readonly skippedCheckpoints: ReadonlyArray<{ file: string; reason: string }>;
  /** The cut restored from other operators' checkpoints or a savepoint (docs/decisions/0057-elastic-workers.md). */
  readonly restoredCut: object | null;
  readonly epoch: number;
  close(): Promise<void>;
}

interface OperatorConfig {
  readonly dataDir: string;
  readonly checkpointDir: string;
}

type ConfigSources = {
  file: unknown;
  fileName: string | undefined;
  env: NodeJS.ProcessEnv;
  flags: Record<string, string | undefined>;
};

/**
 * Runs a stream operator role (an engine worker, a merge operator) until asked to stop: its config
 * parsed from the file found (--config, TIDEMARK_CONFIG, ./tidemark.config.json), env and its
 * flags, its directories made absolute, corrupt checkpoints it skipped on stderr, then the ready
 * line `{<key>: {worker, metrics, restoredFrom, restoredCut, epoch, pid, ...}}`, and a final checkpoint on the stop.
 */
export async function runOperator<C extends OperatorConfig, R extends RunningOperator>(
  flags: Flags,
  role: { key: "engine" | "merge"; flags: readonly string[] },
  parse: (src: ConfigSources) => C,
  start: (config: C) => Promise<R>,
  ready: (running: R) => Record<string, unknown> = () => ({}),
): Promise<number> {
  const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
  const config = parse({
    file: found.file === undefined ? undefined : found.document,
    fileName: found.file,
    env: process.env,
    flags: Object.fromEntries(role.flags.map((f) => [f, flags.get(f)])),
  });
  const running = await start({
    ...config,
    dataDir: resolve(config.dataDir),
    checkpointDir: resolve(config.checkpointDir),
  });
  for (const s of running.skippedCheckpoints)
    process.stderr.write(`tidemark ${role.key}: skipped corrupt checkpoint ${s.file}: ${s.reason}\n`);
  const line = {
    // operatorId is the id's name (docs/decisions/0045-operator-host.md); worker is kept for older readers.
    operatorId: running.worker,
    worker: running.worker,
    ...ready(running),
    metrics: running.metricsUrl,
    restoredFrom: running.restoredFrom ?? null,
    restoredCut: running.restoredCut,
    epoch: running.epoch,
    pid: process.pid,
  };
  process.stdout.write(readyLine({ [role.key]: line }) + "\n");
  await stopRequested();
  await running.close();
  return 0;
}
