import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  decodeEventBatch,
  partitionOf,
  STREAM_EVENTS,
  STREAM_PANES,
  SUBJECT_STATUS,
  type EngineStatusMessage,
  type Pane,
  type TelemetryEvent,
} from "@tidemark/engine/protocol";
import {
  eventsStreamSpec,
  lateStreamSpec,
  panesStreamSpec,
  paneBodyLines,
  streamConfigOf,
} from "@tidemark/engine/nats";
import { isAlive, spawnTidemark, waitFor, type CliProcess } from "../index.js";
import { FAST_POLICIES_CONFIG } from "../up/fast-policies.js";
import { LOAD_SERVICES, runLoad, type LoadResult } from "./http-load.js";
import { CLUSTER_START_TIMEOUT_MS, startNatsCluster, type NatsCluster } from "./nats-cluster.js";
import { readStream } from "./stream-readback.js";

const WINDOW_MS = 10_000;
const BILLING = { lagMs: 2000, graceMs: 8000 };
const TOKEN = "cluster-test-token-123";
const NODE_NAMES = ["n1", "n2", "n3"];

/** Billing's verdict on an event, by docs/semantics.md, "Late data", with W = its own ingest_ts − lag. */
function billingKeeps(e: TelemetryEvent): boolean {
  const end = Math.floor(e.ts / WINDOW_MS) * WINDOW_MS + WINDOW_MS;
  return e.ingest_ts - BILLING.lagMs < end + BILLING.graceMs;
}

/** Count and errors per `service|windowStart`, brute force over the stored events. */
function billingTruth(stored: readonly TelemetryEvent[]): Map<string, { count: number; errors: number }> {
  const truth = new Map<string, { count: number; errors: number }>();
  for (const e of stored) {
    if (!billingKeeps(e)) continue;
    const k = `${e.service}|${Math.floor(e.ts / WINDOW_MS) * WINDOW_MS}`;
    const t = truth.get(k) ?? { count: 0, errors: 0 };
    t.count++;
    if (e.status >= 500) t.errors++;
    truth.set(k, t);
  }
  return truth;
}

/** Billing's latest service-level pane per window, read back from TM_PANES. */
async function billingPanes(nc: NatsConnection): Promise<Pane[]> {
  const latest = new Map<string, Pane>();
  // Each message is a batch of panes, one JSON per line (docs/decisions/0012-batched-transport.md).
  for (const json of (await readStream(nc, STREAM_PANES)).flatMap((m) => paneBodyLines(m.data))) {
    const p = JSON.parse(json) as Pane;
    if (p.policy !== "billing" || p.key.route !== undefined || p.window.end - p.window.start !== WINDOW_MS) continue;
    const prev = latest.get(p.id);
    if (!prev || prev.seq < p.seq) latest.set(p.id, p);
  }
  return [...latest.values()];
}

function latestTs(load: LoadResult): number {
  let max = -Infinity;
  for (const batch of load.acked.values()) for (const e of batch) max = Math.max(max, e.ts);
  return max;
}

function expectAllAcknowledgedStoredOnce(load: LoadResult, stored: readonly TelemetryEvent[]): number {
  const byUser = new Map<string, number>();
  for (const e of stored) byUser.set(e.user, (byUser.get(e.user) ?? 0) + 1);
  let n = 0;
  for (const batch of load.acked.values()) {
    for (const e of batch) {
      n++;
      expect(byUser.get(e.user), `acknowledged event ${e.user}`).toBe(1);
    }
  }
  return n;
}

describe("ingest + 2 engine workers on an auth-enabled 3-node NATS cluster (replicas 3)", () => {
  let cluster: NatsCluster;
  let nc: NatsConnection;
  let status: Subscription;
  let ingestUrl = "";
  let victim = -1;
  const logTimes = new Map<string, number>();
  const roles: CliProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), "tidemark-cluster-roles-"));

  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    nc = await connect({ servers: [...cluster.urls], user: cluster.user, pass: cluster.password, noAsyncTraces: true });
    const jsm = await jetstreamManager(nc);
    for (const spec of [eventsStreamSpec(), panesStreamSpec(), lateStreamSpec()])
      await jsm.streams.add({ ...streamConfigOf(spec), num_replicas: 3 });
    const leader = NODE_NAMES.indexOf((await jsm.streams.info(STREAM_EVENTS)).cluster?.leader ?? "");
    // The node that will die: the one leading TM_EVENTS. Ingest talks to it (its client must
    // fail over and wait out the election); each engine talks to a survivor.
    victim = leader;
    const survivors = [0, 1, 2].filter((i) => i !== victim);
    const config = {
      ...FAST_POLICIES_CONFIG,
      // A partition whose consumer is being recreated after a node loss (2–15 s here) must hold
      // the watermark back rather than be declared idle: idleTimeout above the failover time
      // (docs/operations.md, "Running past one machine").
      engine: { ...FAST_POLICIES_CONFIG.engine, idleTimeout: "30s" },
      referenceHorizon: "20s",
      policies: FAST_POLICIES_CONFIG.policies.map((p) =>
        p.name === "billing"
          ? { ...p, watermark: { kind: "arrival-lag", lag: `${BILLING.lagMs}ms` }, grace: `${BILLING.graceMs}ms` }
          : p,
      ),
    };
    const configFile = join(dir, "tidemark.config.json");
    writeFileSync(configFile, JSON.stringify(config));
    const env = {
      TIDEMARK_NATS_USER: cluster.user,
      TIDEMARK_NATS_PASSWORD: cluster.password,
      TIDEMARK_INGEST_TOKENS: TOKEN,
    };
    const url = (i: number): string => cluster.urls[i] ?? "";
    const ingest = spawnTidemark(["ingest", "--port", "0", "--nats", url(victim), "--config", configFile], { env });
    const engines = (["0-3", "4-7"] as const).map((parts, i) =>
      spawnTidemark(
        [
          "engine",
          "--partitions",
          parts,
          "--data",
          join(dir, "data"),
          "--nats",
          url(survivors[i] ?? 0),
          "--config",
          configFile,
          "--metrics-port",
          "0",
        ],
        { env },
      ),
    );
    roles.push(ingest, ...engines);
    ingestUrl = String((await ingest.ready).ingest);
    for (const e of engines) await e.ready;
    status = nc.subscribe(SUBJECT_STATUS, {
      callback: (_err, msg) => {
        const s = msg.json<EngineStatusMessage>();
        if (s.logTime !== null) logTimes.set(s.worker, s.logTime);
      },
    });
  }, 90_000);
  afterAll(async () => {
    status?.unsubscribe();
    for (const r of roles) if (r.child.exitCode === null) r.child.kill("SIGKILL");
    await nc?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, CLUSTER_START_TIMEOUT_MS);

  it("stores every acknowledged event once, and billing's final panes from 2 split workers equal the stored events", async () => {
    // The load's services land on both workers' partition sets.
    expect(new Set(LOAD_SERVICES.map((s) => partitionOf(s, 8) < 4)).size).toBe(2);
    const load = await runLoad({ ingest: ingestUrl, token: TOKEN, durationMs: 6000, clients: 3, size: 100 });
    expect(load.acked.size).toBeGreaterThan(20);
    const lastTs = latestTs(load);
    const closeAt = Math.floor(lastTs / WINDOW_MS) * WINDOW_MS + WINDOW_MS + BILLING.lagMs + BILLING.graceMs;
    await waitFor(
      () => logTimes.size === 2 && Math.min(...logTimes.values()) > closeAt + 1000,
      60_000,
      "both engines' log time past the last billing close",
      500,
    );

    const stored = (await readStream(nc, STREAM_EVENTS)).flatMap((m) => decodeEventBatch(m.body));
    const ackedEvents = expectAllAcknowledgedStoredOnce(load, stored);
    const panes = await billingPanes(nc);
    expect(panes.every((p) => p.kind === "final")).toBe(true);
    const got = new Map(
      panes.map((p) => [`${p.key.service}|${p.window.start}`, { count: p.value.count, errors: p.value.errors }]),
    );
    const truth = billingTruth(stored);
    expect(got).toEqual(truth);
    console.log(
      `cluster: ${ackedEvents} events acknowledged and stored once; ${got.size} billing windows (2 workers) equal the stored events`,
    );
  });

  it("loses no acknowledged event when a NATS node dies under load, and billing's panes still equal the stored events", async () => {
    let crashed = false;
    let crashAt = 0;
    const victimPid = cluster.pid(victim);
    const load = await runLoad({
      ingest: ingestUrl,
      token: TOKEN,
      durationMs: 8000,
      clients: 3,
      size: 100,
      onTick: (elapsed) => {
        if (!crashed && elapsed > 2500) {
          crashed = true;
          crashAt = Date.now();
          void cluster.crash(victim);
        }
      },
    });
    expect(crashed).toBe(true);
    await waitFor(() => !isAlive(victimPid), 5000, "the killed node to be gone");
    expect(load.acked.size).toBeGreaterThan(20);
    // Ingest failed over to a surviving node: a request started now is acknowledged.
    const later = await runLoad({ ingest: ingestUrl, token: TOKEN, durationMs: 300, clients: 1, size: 10 });
    expect(later.abandoned).toBe(0);
    expect(latestTs(later)).toBeGreaterThan(crashAt);
    const stored = (await readStream(nc, STREAM_EVENTS)).flatMap((m) => decodeEventBatch(m.body));
    const ackedEvents = expectAllAcknowledgedStoredOnce(load, stored) + expectAllAcknowledgedStoredOnce(later, stored);

    // The panes are still right: every window, before, across and after the crash.
    const closeAt = Math.floor(latestTs(later) / WINDOW_MS) * WINDOW_MS + WINDOW_MS + BILLING.lagMs + BILLING.graceMs;
    await waitFor(
      () => logTimes.size === 2 && Math.min(...logTimes.values()) > closeAt + 1000,
      60_000,
      "both engines' log time past the last billing close",
      500,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}; log times ${JSON.stringify([...logTimes])}, close at ${closeAt}\n${roles
          .slice(1)
          .map((r) =>
            r
              .output()
              .split("\n")
              .filter((l) => /heartbeats|idle|failed/.test(l))
              .slice(-10)
              .join("\n"),
          )
          .join("\n")}`,
      );
    });
    const all = (await readStream(nc, STREAM_EVENTS)).flatMap((m) => decodeEventBatch(m.body));
    const panes = await billingPanes(nc);
    const got = new Map(
      panes.map((p) => [`${p.key.service}|${p.window.start}`, { count: p.value.count, errors: p.value.errors }]),
    );
    expect(got).toEqual(billingTruth(all));
    const recreated = roles.slice(1).reduce((n, r) => n + (r.output().match(/missed its heartbeats/g)?.length ?? 0), 0);
    console.log(
      `cluster: node killed under load; ${ackedEvents} acknowledged events all stored once (${load.retried} attempts retried); ` +
        `${got.size} billing windows equal the stored events; ${recreated} engine consumers recreated after missing heartbeats`,
    );

    for (const r of roles) expect(r.child.exitCode).toBeNull();
    for (const r of roles) r.child.kill("SIGTERM");
    for (const r of roles) expect(await r.exited).toBe(0);
  }, 120_000);
});
