import { resolve } from "node:path";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/** `tidemark merge`: a merge operator of the two-stage dataflow (docs/operations.md, "Merge stage"). */
export const merge: Command = {
  summary:
    "run a merge operator: TM_PARTIALS (every worker's partials) → all-services panes on TM_PANES; checkpoints in <data>/checkpoints/<id>",
  usage:
    "tidemark merge [--worker merge-0] [--data DIR] [--nats URL] [--config FILE] [--checkpoint-every 5s]\n" +
    "               [--idle-timeout 10s] [--metrics-port 0] [--partition-count 8]",
  async run(flags: Flags): Promise<number> {
    const { MERGE_FLAGS, parseMergeConfig, startMerge } = await import("@tidemark/engine/runtime");
    const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const config = parseMergeConfig({
      file: found.file === undefined ? undefined : found.document,
      fileName: found.file,
      env: process.env,
      flags: Object.fromEntries(MERGE_FLAGS.map((f) => [f, flags.get(f)])),
    });
    const running = await startMerge({
      ...config,
      dataDir: resolve(config.dataDir),
      checkpointDir: resolve(config.checkpointDir),
    });
    for (const s of running.skippedCheckpoints)
      process.stderr.write(`tidemark merge: skipped corrupt checkpoint ${s.file}: ${s.reason}\n`);
    process.stdout.write(
      readyLine({
        merge: {
          worker: running.worker,
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
