import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { panesSubject, STREAM_PANES, type Pane } from "@tidemark/engine/protocol";
import { panesStreamSpec, streamConfigOf } from "@tidemark/engine/nats";
import { spawnTidemark, waitFor, type CliProcess } from "../index.js";
import { pane } from "../dashboard/fixtures.js";
import { CLUSTER_START_TIMEOUT_MS, startNatsCluster, type NatsCluster } from "./nats-cluster.js";

const NODE_NAMES = ["n1", "n2", "n3"];
const WINDOWS = 20;
const WINDOW_MS = 10_000;

/** Publishes like the engine (`Nats-Msg-Id` = `id#seq`), again until acknowledged: the stream may be electing a leader. */
async function publishAcked(nc: NatsConnection, p: Pane): Promise<void> {
  const js = jetstream(nc, { timeout: 2000 });
  const h = headers();
  h.set("Nats-Msg-Id", `${p.id}#${p.seq}`);
  for (let attempt = 1; ; attempt++) {
    try {
      await js.publish(panesSubject(p.policy, WINDOW_MS), JSON.stringify(p), { headers: h });
      return;
    } catch (err) {
      if (attempt >= 80) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** The node hosting TM_PANES's one consumer (the dashboard's), once it exists. */
async function consumerNode(jsm: JetStreamManager): Promise<number> {
  let node = -1;
  await waitFor(
    async () => {
      for await (const c of jsm.consumers.list(STREAM_PANES)) node = NODE_NAMES.indexOf(c.cluster?.leader ?? "");
      return node >= 0;
    },
    10_000,
    "the dashboard's TM_PANES consumer",
    200,
  );
  return node;
}

async function shown(dashboard: string): Promise<Map<string, string>> {
  const res = await fetch(`${dashboard}/api/panes?policy=billing&window=10s`);
  if (!res.ok) return new Map();
  return new Map(
    ((await res.json()) as { panes: Pane[] }).panes.map((p) => [p.id, `seq ${p.seq} count ${p.value.count}`]),
  );
}

describe("dashboard on a 3-node NATS cluster: the node hosting its TM_PANES consumer dies while panes are published", () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let dashboard: CliProcess;
  let victim = -1;

  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    const admin = await connect({
      servers: [...cluster.urls],
      user: cluster.user,
      pass: cluster.password,
      noAsyncTraces: true,
    });
    const jsm = await jetstreamManager(admin);
    await jsm.streams.add({ ...streamConfigOf(panesStreamSpec()), num_replicas: 3 });
    // The node that dies hosts the dashboard's ordered consumer but not its connection: the
    // connection stays up and only the consumer is lost (a connection loss takes the reconnect
    // path instead). The server places the consumer on any replica, so a dashboard whose consumer
    // landed on its own node is restarted on another node (bounded).
    const env = { TIDEMARK_NATS_USER: cluster.user, TIDEMARK_NATS_PASSWORD: cluster.password };
    for (let attempt = 0, node = 0; attempt < 6 && victim < 0; attempt++) {
      dashboard = spawnTidemark(["dashboard", "--port", "0", "--nats", cluster.urls[node] ?? ""], { env });
      await dashboard.ready;
      const host = await consumerNode(jsm);
      if (host !== node) victim = host;
      else {
        dashboard.child.kill("SIGTERM");
        await dashboard.exited;
        node = (node + 1) % 3;
      }
    }
    expect(victim).toBeGreaterThanOrEqual(0);
    await admin.close();
    nc = await connect({
      servers: cluster.urls[(victim + 1) % 3] ?? "",
      user: cluster.user,
      pass: cluster.password,
      noAsyncTraces: true,
    });
  }, 90_000);
  afterAll(async () => {
    if (dashboard?.child.exitCode === null) dashboard.child.kill("SIGKILL");
    await nc?.close();
    await cluster?.stop();
  }, CLUSTER_START_TIMEOUT_MS);

  it("reaches the final published state: the newest seq of every pane, none skipped", async () => {
    const url = String((await dashboard.ready).dashboard);
    const start = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS - WINDOWS * WINDOW_MS;
    const expected = new Map<string, string>();
    // 120 publishes, 50 ms apart: every window gets seqs 1..6, its count growing with each.
    for (let i = 0; i < 120; i++) {
      if (i === 40) await cluster.crash(victim);
      const p = pane({
        policy: "billing",
        service: "checkout",
        windowMs: WINDOW_MS,
        start: start + (i % WINDOWS) * WINDOW_MS,
        seq: Math.floor(i / WINDOWS) + 1,
        kind: "final",
        count: i + 1,
      });
      await publishAcked(nc, p);
      expected.set(p.id, `seq ${p.seq} count ${p.value.count}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    let got = new Map<string, string>();
    await waitFor(
      async () => {
        got = await shown(url);
        return [...expected].every(([id, v]) => got.get(id) === v);
      },
      20_000,
      "the dashboard's /api/panes to show the last version of every published pane",
      250,
    ).catch((err: Error) => {
      const behind = [...expected].filter(([id, v]) => got.get(id) !== v).length;
      throw new Error(
        `${err.message}; ${behind} of ${expected.size} panes behind\n${dashboard
          .output()
          .split("\n")
          .filter((l) => /heartbeats|feed/.test(l))
          .slice(-8)
          .join("\n")}`,
      );
    });
    expect(got).toEqual(expected);
    const recreated = dashboard.output().match(/missed its heartbeats/g)?.length ?? 0;
    console.log(
      `dashboard: node hosting the TM_PANES consumer (${NODE_NAMES[victim]}) killed after 40 of 120 publishes; /api/panes shows the last version of all ${expected.size} panes; consumer recreated ${recreated} time(s) after missed heartbeats`,
    );
    dashboard.child.kill("SIGTERM");
    expect(await dashboard.exited).toBe(0);
  }, 90_000);
});
