import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  STREAM_CHECKPOINTS,
  STREAM_EVENTS,
  STREAM_LATE,
  STREAM_PANES,
  STREAM_PARTIALS,
} from "@tidemark/engine/protocol";
import { isAlive, spawnTidemark, waitFor } from "../index.js";
import { CLUSTER_START_TIMEOUT_MS, startNatsCluster, type NatsCluster } from "./nats-cluster.js";

describe("tidemark up --nats <cluster> with credentials and replicas 3 from tidemark.config.json", () => {
  let cluster: NatsCluster;
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-cluster-"));
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
  }, CLUSTER_START_TIMEOUT_MS);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates the streams with 3 replicas, runs every role against the authenticated cluster, and stores demo traffic", async () => {
    const configFile = join(dir, "tidemark.config.json");
    // Credentials come from the environment (never the file or a flag); the file sets the replicas.
    writeFileSync(configFile, JSON.stringify({ nats: { url: cluster.urls[1], replicas: 3 }, demo: { rate: 200 } }));
    const up = spawnTidemark(
      ["up", "--config", configFile, "--data", join(dir, "data"), "--ingest-port", "0", "--dashboard-port", "0"],
      {
        cwd: dir,
        env: { TIDEMARK_NATS_USER: cluster.user, TIDEMARK_NATS_PASSWORD: cluster.password },
        readyTimeoutMs: 60_000,
      },
    );
    const ready = await up.ready;
    const pids = ready.pids as Record<string, number>;
    expect(Object.keys(pids).sort()).toEqual(["dashboard", "demo", "engine", "ingest", "merge"]);

    const nc = await connect({
      servers: [...cluster.urls],
      user: cluster.user,
      pass: cluster.password,
      noAsyncTraces: true,
    });
    try {
      const jsm = await jetstreamManager(nc);
      for (const name of [STREAM_EVENTS, STREAM_PANES, STREAM_LATE, STREAM_PARTIALS, STREAM_CHECKPOINTS]) {
        const info = await jsm.streams.info(name);
        expect(info.config.num_replicas, name).toBe(3);
      }
      await waitFor(
        async () => (await jsm.streams.info(STREAM_EVENTS)).state.messages > 20,
        30_000,
        "demo traffic in TM_EVENTS",
        500,
      );
      await waitFor(
        async () => (await jsm.streams.info(STREAM_PANES)).state.messages > 0,
        30_000,
        "panes in TM_PANES",
        500,
      );
    } finally {
      await nc.close();
    }
    up.child.kill("SIGINT");
    expect(await up.exited).toBe(0);
    for (const pid of Object.values(pids)) await waitFor(() => !isAlive(pid), 15_000, `child ${pid} to exit`);
    for (let i = 0; i < 3; i++) expect(isAlive(cluster.pid(i))).toBe(true);
  });
});
