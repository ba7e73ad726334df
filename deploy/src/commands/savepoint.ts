import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { refuseCountAsPartitions } from "../partition-count.js";

/**
 * `tidemark savepoint --to DIR`: a consistent cut of the whole dataflow, kept until deleted, that
 * every role restores at any parallelism with `--from-savepoint DIR` (docs/operations.md,
 * "Rescaling"; docs/decisions/0057-elastic-workers.md). Online, the checkpoint coordinator (the
 * merge operator of merge partition 0) takes an aligned checkpoint at once and its files are
 * copied; `--offline`, with every role stopped, the newest consistent cut of the data directory
 * is. Prints one JSON line: the savepoint's directory, cut, restore epoch and operators.
 */
export const savepoint: Command = {
  summary: "copy a consistent cut of the whole dataflow into a directory, to restore at any parallelism",
  usage:
    "tidemark savepoint --to DIR [--nats URL] [--timeout 60s] [--config FILE]\n" +
    "tidemark savepoint --to DIR --offline [--data DIR] [--partition-count 8] [--config FILE]",
  booleans: ["offline"],
  async run(flags: Flags): Promise<number> {
    refuseCountAsPartitions(flags, "savepoint");
    const { parseEngineConfig, takeSavepoint, offlineSavepoint } = await import("@tidemark/engine/runtime");
    const { connectNats } = await import("@tidemark/engine/nats");
    const { parseDuration } = await import("@tidemark/engine/core");
    const to = flags.required(
      "to",
      "the directory to write the savepoint into (new or empty), e.g. --to savepoints/before-rescale",
    );
    const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const config = parseEngineConfig({
      file: found.file === undefined ? undefined : found.document,
      fileName: found.file,
      env: process.env,
      flags: { nats: flags.get("nats"), data: flags.get("data"), "partition-count": flags.get("partition-count") },
    });
    const progress = (line: string): void => void process.stderr.write(`tidemark savepoint: ${line}\n`);
    let manifest;
    if (flags.bool("offline", false)) {
      progress(`reading the newest consistent cut of ${config.dataDir}`);
      manifest = await offlineSavepoint(config.dataDir, to, config.partitionCount);
    } else {
      const timeoutMs = parseDuration(flags.get("timeout") ?? "60s");
      const nc = await connectNats(config.natsUrl);
      try {
        manifest = await takeSavepoint(nc, { to, timeoutMs, progress });
      } finally {
        await nc.close();
      }
    }
    const operators = manifest.operators.map((o) => o.id);
    process.stdout.write(
      `${JSON.stringify({ savepoint: { dir: to, cut: manifest.cut, epoch: manifest.epoch, format: manifest.format, operators } })}\n`,
    );
    return 0;
  },
};
