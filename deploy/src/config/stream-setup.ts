/**
 * Makes sure TM_EVENTS, TM_PANES, TM_LATE, TM_PARTIALS and TM_CHECKPOINTS exist before any role starts
 * (docs/decisions/0005-ingest.md, "Streams"), with the replica count of `nats.replicas` (3 on a
 * 3-node cluster). Existing streams are only checked, never altered (`ensureStream`), so a mismatch
 * stops `up` with TM_STREAM_MISMATCH.
 */
import { connect } from "@nats-io/transport-node";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { natsCredentialEnv } from "./nats-env.js";
import {
  ensureStream,
  natsConnectOptions,
  allStreamSpecs,
  streamConfigOf,
  type StreamSpec,
} from "@tidemark/engine/nats";
import type { NatsSettings } from "./nats-section.js";

export type StreamOutcome = "created" | "exists";

export async function ensureStreams(url: string, nats: NatsSettings): Promise<Record<string, StreamOutcome>> {
  const nc = await connect({ ...natsConnectOptions(url, natsCredentialEnv(nats)), noAsyncTraces: true });
  try {
    const jsm = await jetstreamManager(nc);
    const out: Record<string, StreamOutcome> = {};
    for (const spec of allStreamSpecs()) out[spec.name] = await ensureReplicated(jsm, spec, nats.replicas);
    return out;
  } finally {
    await nc.close();
  }
}

async function ensureReplicated(jsm: JetStreamManager, spec: StreamSpec, replicas: number): Promise<StreamOutcome> {
  if (replicas > 1) {
    const exists = await jsm.streams.info(spec.name).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await jsm.streams.add({ ...streamConfigOf(spec), num_replicas: replicas });
      await ensureStream(jsm, spec);
      return "created";
    }
  }
  return ensureStream(jsm, spec);
}
