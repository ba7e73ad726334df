import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/** `tidemark remote-write`: each policy's settled panes to a Prometheus remote-write receiver (docs/remote-write.md). */
export const remoteWrite: Command = {
  summary: "write each policy's settled panes (TM_PANES) to a Prometheus remote-write receiver",
  usage:
    "tidemark remote-write --url URL [--nats URL] [--data DIR] [--config FILE] [--consumer NAME]\n" +
    "                      [--batch-size 2000] [--queue-capacity 100000] [--max-series 1000000]\n" +
    "                      [--min-backoff 30ms] [--max-backoff 5s] [--timeout 30s] [--ack-wait 5m]\n" +
    "                      [--host 127.0.0.1] [--metrics-port 0]",
  async run(flags: Flags): Promise<number> {
    const {
      startRemoteWrite,
      resolveRemoteWriteConfig,
      remoteWriteFileLayer,
      remoteWriteEnvLayer,
      remoteWriteFlagLayer,
    } = await import("@tidemark/dashboard");
    const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const config = resolveRemoteWriteConfig(
      {
        nats: flags.get("nats") ?? found.nats.url ?? "nats://127.0.0.1:4222",
        dataDir: flags.get("data") ?? found.data,
        policies: found.core.policies,
      },
      remoteWriteFileLayer(found.document["remoteWrite"], found.file ?? "config"),
      remoteWriteEnvLayer(process.env),
      remoteWriteFlagLayer((f) => flags.get(f)),
    );
    const role = await startRemoteWrite(config);
    process.stdout.write(
      readyLine({
        remoteWrite: { url: config.url, consumer: role.consumer, metrics: role.metricsUrl, pid: process.pid },
      }) + "\n",
    );
    await stopRequested();
    await role.close();
    return 0;
  },
};
