import { resolve } from "node:path";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/** `tidemark engine`: one engine worker over its owned partitions (docs/operations.md, "Engine workers"). */
export const engine: Command = {
  summary:
    "run an engine worker: TM_EVENTS → windows/policies → TM_PANES, TM_LATE; checkpoints in <data>/checkpoints/<worker>",
  usage:
    "tidemark engine [--partitions 0-3,6] [--worker ID] [--data DIR] [--nats URL] [--config FILE]\n" +
    "                [--checkpoint-every 5s] [--idle-timeout 10s] [--metrics-port 9464] [--partition-count 8]\n" +
    "                [--sessions [on|off]] [--session-gap 60s] [--session-max-length 4h] [--partials on|off]",
  async run(flags: Flags): Promise<number> {
    const { ENGINE_FLAGS, parseEngineConfig, startEngine } = await import("@tidemark/engine/runtime");
    // --config FILE, else TIDEMARK_CONFIG, else ./tidemark.config.json when present.
    const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const config = parseEngineConfig({
      file: found.file === undefined ? undefined : found.document,
      fileName: found.file,
      env: process.env,
      flags: Object.fromEntries(ENGINE_FLAGS.map((f) => [f, flags.get(f)])),
    });
    const running = await startEngine({
      ...config,
      dataDir: resolve(config.dataDir),
      checkpointDir: resolve(config.checkpointDir),
    });
    for (const s of running.skippedCheckpoints)
      process.stderr.write(`tidemark engine: skipped corrupt checkpoint ${s.file}: ${s.reason}\n`);
    process.stdout.write(
      readyLine({
        engine: {
          worker: running.worker,
          partitions: running.partitions,
          metrics: running.metricsUrl,
          restoredFrom: running.restoredFrom ?? null,
          pid: process.pid,
        },
      }) + "\n",
    );
    await stopRequested();
    await running.close();
    return 0;
  },
};
