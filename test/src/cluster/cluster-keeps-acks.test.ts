import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { encodeEventBatch, eventsSubject, STREAM_EVENTS, type TelemetryEvent } from "@tidemark/engine/protocol";
import { ensureStream, eventsStreamSpec, streamConfigOf } from "@tidemark/engine/nats";
import { isAlive, waitFor } from "../index.js";
import { CLUSTER_START_TIMEOUT_MS, startNatsCluster, type NatsCluster } from "./nats-cluster.js";
import { readStream } from "./stream-readback.js";

const NODE_NAMES = ["n1", "n2", "n3"];

function batch(n: number, size: number): TelemetryEvent[] {
  return Array.from({ length: size }, (_, i) => ({
    ts: 1_800_000_000_000 + n * 1000 + i,
    ingest_ts: 1_800_000_000_000 + n * 1000 + i,
    service: `svc-${n % 5}`,
    route: "GET /x",
    status: i % 17 === 0 ? 503 : 200,
    latency_ms: 10 + (i % 50),
    user: `u${i % 40}`,
  }));
}

describe("3-node nats-server cluster from deploy/nats/cluster-node.conf", () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;

  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    nc = await connect({ servers: [...cluster.urls], user: cluster.user, pass: cluster.password, noAsyncTraces: true });
  }, CLUSTER_START_TIMEOUT_MS);
  afterAll(async () => {
    await nc?.close();
    if ((cluster as NatsCluster | undefined) === undefined) return; // beforeAll failed: its error is the report
    const pids = [0, 1, 2].map((i) => cluster.pid(i)).filter((pid) => pid > 0);
    await cluster?.stop();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it("refuses clients without credentials", async () => {
    await expect(connect({ servers: cluster.urls[0], noAsyncTraces: true, reconnect: false })).rejects.toThrow(
      /authorization/i,
    );
  });

  it("keeps every acknowledged batch, exactly once, when the stream leader dies under load", async () => {
    const jsm = await jetstreamManager(nc);
    const spec = eventsStreamSpec();
    await jsm.streams.add({ ...streamConfigOf(spec), num_replicas: 3 });
    expect(await ensureStream(jsm, spec)).toBe("exists");
    const info = await jsm.streams.info(STREAM_EVENTS);
    expect(info.config.num_replicas).toBe(3);
    const leader = NODE_NAMES.indexOf(info.cluster?.leader ?? "");
    expect(leader).toBeGreaterThanOrEqual(0);
    const leaderPid = cluster.pid(leader);
    expect(leaderPid).toBeGreaterThan(0);

    const js = jetstream(nc, { timeout: 2000 });
    const acked = new Map<string, number>();
    let next = 0;
    let failedAttempts = 0;
    /** The leader dies once this many batches are acknowledged; the load goes on until as many more are. */
    const PER_SIDE = 60;
    /** A counted bound on the load, should acknowledgements stop for good. */
    const MAX_BATCHES = 5_000;
    let ackedAtCrash: number | undefined;
    const publishOne = async (n: number): Promise<void> => {
      const events = batch(n, 200);
      const p = n % 8;
      const id = `load-${n}-${p}`;
      const h = headers();
      h.set("Nats-Msg-Id", id);
      for (const giveUp = Date.now() + 20_000; Date.now() < giveUp;) {
        try {
          await js.publish(eventsSubject(p), encodeEventBatch(events), { headers: h, timeout: 2000 });
          acked.set(id, events.length);
          return;
        } catch {
          failedAttempts++; // retried with the same Nats-Msg-Id, as ingest's clients do
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    const done = () => ackedAtCrash !== undefined && acked.size >= ackedAtCrash + PER_SIDE;
    const worker = async (): Promise<void> => {
      while (!done() && next < MAX_BATCHES) await publishOne(next++);
    };
    // The crash lands mid-load: after PER_SIDE acknowledged batches, with four publishers running.
    const crash = (async () => {
      await waitFor(() => acked.size >= PER_SIDE, 30_000, `${PER_SIDE} batches acknowledged before the crash`, 10);
      await cluster.crash(leader);
      ackedAtCrash = acked.size;
    })();
    await Promise.all([worker(), worker(), worker(), worker(), crash]);
    expect(isAlive(leaderPid)).toBe(false);
    // As many batches acknowledged again after the leader died, within the bound.
    expect(done(), `${acked.size} acknowledged, ${ackedAtCrash} at the crash, ${next} tried`).toBe(true);

    // A new leader takes over among the survivors (the election can outlast a request timeout).
    await waitFor(
      async () => {
        const after = await jsm.streams.info(STREAM_EVENTS).catch(() => undefined);
        const now = after?.cluster?.leader;
        return now !== undefined && now !== "" && now !== NODE_NAMES[leader];
      },
      20_000,
      "a new stream leader among the surviving nodes",
      250,
    );

    const stored = await readStream(nc, STREAM_EVENTS);
    const seen = new Map<string, number>();
    const bodies = new Map<string, string>();
    for (const m of stored) {
      if (!m.msgId) continue;
      seen.set(m.msgId, (seen.get(m.msgId) ?? 0) + 1);
      bodies.set(m.msgId, m.body);
    }
    for (const [id, count] of acked) {
      expect(seen.get(id), `acknowledged batch ${id}`).toBe(1);
      expect((bodies.get(id) ?? "").split("\n").filter((l) => l !== "").length).toBe(count);
    }
    expect([...seen.values()].every((c) => c === 1)).toBe(true);
    console.log(
      `cluster: ${acked.size} batches acknowledged, ${failedAttempts} publish attempts retried around the crash, ${stored.length} stored`,
    );

    // The dead node comes back and catches up from its peers.
    await cluster.start(leader);
    await waitFor(
      async () => {
        const res = await fetch(`${cluster.monitorUrl(leader)}/jsz?streams=true&accounts=true`);
        const jsz = (await res.json()) as { messages?: number };
        return jsz.messages === stored.length;
      },
      30_000,
      "the restarted node to hold every message again",
      500,
    );
  });
});
