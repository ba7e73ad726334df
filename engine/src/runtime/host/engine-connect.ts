/**
 * The engine's NATS step: connect (reconnecting for ever afterwards), check that the server takes
 * the largest pane batch (emit-group.ts), make sure TM_EVENTS,
 * TM_PANES, TM_LATE, TM_PARTIALS and TM_CHECKPOINTS exist and match (`ensureStream`), and say in the log when retention has
 * removed messages between a checkpoint's offsets and the start of TM_EVENTS (`checkRetention`,
 * once the checkpoint to resume from is known).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Logger } from "pino";
import { connectNats, ensureStream, allStreamSpecs } from "../../nats/index.js";
import { STREAM_EVENTS } from "../../protocol.js";
import type { EngineConfig } from "../config/config.js";
import { MIN_MAX_PAYLOAD } from "../output/emit-group.js";
import { RuntimeError } from "../errors.js";
import type { LaneOffset } from "../input/partition-interleave.js";

export async function connectEngine(config: EngineConfig): Promise<NatsConnection> {
  const nc = await connectNats(config.natsUrl, { maxReconnectAttempts: -1 });
  try {
    checkMaxPayload(nc, config.natsUrl);
    const jsm = await jetstreamManager(nc);
    for (const spec of allStreamSpecs()) await ensureStream(jsm, spec);
    return nc;
  } catch (err) {
    await nc.close();
    throw err;
  }
}

/** Offsets older than the first message of TM_EVENTS resume past a gap: those messages are lost. */
export async function checkRetention(nc: NatsConnection, offsets: readonly LaneOffset[], log: Logger): Promise<void> {
  if (offsets.length === 0) return;
  const jsm = await jetstreamManager(nc);
  const first = (await jsm.streams.info(STREAM_EVENTS)).state.first_seq;
  const behind = offsets.filter((o) => o.lastSeq > 0 && o.lastSeq + 1 < first);
  if (behind.length === 0) return;
  log.error(
    { firstSeq: first, resumeAt: behind.map((o) => o.lastSeq + 1) },
    "TM_EVENTS now starts past where this checkpoint resumes: messages of these partitions stored in between were removed by retention and are lost",
  );
}

/** A pane batch is up to MIN_MAX_PAYLOAD bytes (emit-group.ts): a server allowing less would refuse it for ever. */
function checkMaxPayload(nc: NatsConnection, url: string): void {
  const max = nc.info?.max_payload;
  if (max === undefined || max >= MIN_MAX_PAYLOAD) return;
  throw new RuntimeError(
    "TM_ENGINE_MAX_PAYLOAD",
    `nats-server at ${url} takes messages of at most ${max} bytes (max_payload), but the engine's pane batches ` +
      `need ${MIN_MAX_PAYLOAD}: set max_payload to 1MB or more in the server's configuration`,
  );
}
