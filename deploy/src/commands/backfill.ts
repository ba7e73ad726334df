import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { BackfillMessage } from "@tidemark/engine/runtime";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { refuseCountAsPartitions } from "../partition-count.js";
import { DeployError } from "../errors.js";
import { OrderedPublisher } from "../nats/ordered-publisher.js";

/** How long JetStream has to acknowledge one publish before it is sent again (as the engine's pane sink). */
const ACK_TIMEOUT_MS = 5_000;
/** How long one message is sent again (a nats-server restarting) before the run fails. */
const RETRY_FOR_MS = 60_000;
const RETRY_DELAY_MS = 250;
/** Messages queued across partitions before reading the recording waits. */
const MAX_QUEUED = 256;

/**
 * `tidemark backfill --input rec.ndjson`: publishes a recording into TM_EVENTS directly over
 * NATS, partitioned and batched like ingest, with heartbeats synthesized from its ingest_ts and
 * an end-of-recording heartbeat (BackfillPlan), so the engine computes what it would have live.
 * Message ids are derived from the file and the options: a re-run is deduplicated. Each partition is
 * stored in the plan's order, across a dropped connection too (OrderedPublisher;
 * docs/decisions/0006-engine-runtime.md, "Backfill").
 */
export const backfill: Command = {
  summary: "publish a recording (with its own ts and ingest_ts) into TM_EVENTS, heartbeats included",
  usage:
    "tidemark backfill --input FILE [--rate N] [--nats URL] [--partition-count 8] [--partition-by service|service+route]\n" +
    "                  [--batch 500] [--config FILE]",
  async run(flags: Flags): Promise<number> {
    refuseCountAsPartitions(flags, "backfill");
    const { BackfillPlan, parseEngineConfig, parseRecordingLine } = await import("@tidemark/engine/runtime");
    const { ensureStream, eventsStreamSpec, connectNats } = await import("@tidemark/engine/nats");
    const { eventsSubject, HEARTBEAT_HEADER } = await import("@tidemark/engine/protocol");
    const { headers } = await import("@nats-io/transport-node");
    const { jetstream, jetstreamManager } = await import("@nats-io/jetstream");

    const input = flags.required(
      "input",
      "the recording to publish (NDJSON, docs/operations.md, Backfill), e.g. --input rec.ndjson",
    );
    const rate = flags.int("rate", 0, 0, 100_000_000);
    const batch = flags.int("batch", 500, 1, 10_000);
    // The engine's windows and policies fix the end-of-recording heartbeat: read the same file it does.
    const found = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const config = parseEngineConfig({
      file: found.file === undefined ? undefined : found.document,
      fileName: found.file,
      env: process.env,
      flags: {
        nats: flags.get("nats"),
        "partition-count": flags.get("partition-count"),
        "partition-by": flags.get("partition-by"),
      },
    });
    // First pass: every line must parse before anything is published (a fixed file is a new run).
    const by = config.partitionBy === "service" ? "" : `/${config.partitionBy}`;
    const runId = await checkedDigest(input, `${config.partitionCount}/${batch}${by}`, parseRecordingLine);
    const plan = new BackfillPlan({
      partitions: config.partitionCount,
      partitionBy: config.partitionBy,
      runId,
      batchSize: batch,
    });

    const nc = await connectNats(config.natsUrl);
    const stats = { events: 0, messages: 0, heartbeats: 0 };
    try {
      await ensureStream(await jetstreamManager(nc), eventsStreamSpec());
      const js = jetstream(nc);
      // In the plan's order, pipelined, but never past an unacknowledged message of the same
      // partition, a lost one sent again first: each partition stays in order across a reconnect.
      const publisher = new OrderedPublisher<BackfillMessage>({
        send: (m) => {
          const h = headers();
          if (m.heartbeatTs !== undefined) h.set(HEARTBEAT_HEADER, String(m.heartbeatTs));
          return js.publish(eventsSubject(m.partition), m.body, {
            msgID: m.msgId,
            headers: h,
            timeout: ACK_TIMEOUT_MS,
          });
        },
        retryable: transientPublishError,
        maxQueued: MAX_QUEUED,
        retryForMs: RETRY_FOR_MS,
        retryDelayMs: RETRY_DELAY_MS,
        onRetry: (m, err) =>
          process.stderr.write(
            `tidemark backfill: message ${m.msgId} to partition ${m.partition} not acknowledged (${(err as Error).message}); sending it again\n`,
          ),
        failed: (m, err) =>
          new DeployError(
            "TM_BACKFILL_NOT_STORED",
            `message ${m.msgId} to partition ${m.partition} was not acknowledged for ${RETRY_FOR_MS / 1000} s ` +
              `(${(err as Error).message}); every partition is stored in order up to where it stopped: ` +
              `run the same backfill again once NATS is back (a re-run is deduplicated)`,
          ),
      });
      const publish = async (m: BackfillMessage): Promise<void> => {
        stats.messages++;
        if (m.heartbeatTs !== undefined) stats.heartbeats++;
        stats.events += m.events;
        await publisher.publish(m);
      };
      const started = Date.now();
      let lastProgress = started;
      for await (const [line, where] of recordingLines(input)) {
        for (const m of plan.push(parseRecordingLine(line, where))) await publish(m);
        if (rate > 0) {
          const ahead = (plan.eventsSeen / rate) * 1000 - (Date.now() - started);
          if (ahead > 5) await new Promise((r) => setTimeout(r, ahead));
        }
        if (Date.now() - lastProgress >= 1000) {
          lastProgress = Date.now();
          process.stderr.write(
            `tidemark backfill: ${plan.eventsSeen} events read, ${stats.messages} messages published\n`,
          );
        }
      }
      for (const m of plan.end(config.core)) await publish(m);
      await publisher.drain();
      const summary = {
        ...stats,
        duplicates: publisher.duplicates,
        retries: publisher.retries,
        eventsRead: plan.eventsSeen,
        outOfOrder: plan.outOfOrder,
        endOfRecordingTs: plan.eventsSeen > 0 ? plan.endOfRecordingTs(config.core) : null,
        runId,
        seconds: (Date.now() - started) / 1000,
      };
      if (plan.outOfOrder > 0)
        process.stderr.write(
          `tidemark backfill: warning: ${plan.outOfOrder} events had an ingest_ts below an earlier one; the engine processes them at the log time reached\n`,
        );
      process.stdout.write(`tidemark backfill done ${JSON.stringify(summary)}\n`);
    } finally {
      await nc.drain().catch(() => undefined);
    }
    return 0;
  },
};

/** A lost or unanswered publish (connection dropped, server restarting, JetStream not up yet), worth sending again. */
function transientPublishError(err: unknown): boolean {
  const name = (err as Error | undefined)?.name;
  return (
    name === "TimeoutError" || name === "RequestError" || name === "NoResponders" || name === "JetStreamNotEnabled"
  );
}

/** The non-empty lines of a recording with their place (`file:line`). */
async function* recordingLines(file: string): AsyncGenerator<[string, string]> {
  let n = 0;
  try {
    for await (const line of createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity })) {
      n++;
      if (line.trim() !== "") yield [line, `${file}:${n}`];
    }
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith("TM_")) throw err;
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      `--input ${file}: ${(err as Error).message}; pass a readable recording file`,
    );
  }
}

/** Checks every line and returns a short digest of the lines and the options that shape the messages. */
async function checkedDigest(
  file: string,
  options: string,
  check: (line: string, where: string) => unknown,
): Promise<string> {
  const h = createHash("sha256");
  for await (const [line, where] of recordingLines(file)) {
    check(line, where);
    h.update(line).update("\n");
  }
  return h.update(options).digest("hex").slice(0, 12);
}
