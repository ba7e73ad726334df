/**
 * `tidemark remote-write` against real components (docs/remote-write.md, "Tests"): nats-server,
 * `tidemark engine` fed by `tidemark backfill`, and a real Prometheus 2.42 receiving remote
 * writes. The oracle is TM_PANES itself: the settled panes' values, read independently of the role.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  makeRecording,
  metricValue,
  readStream,
  runBackfill,
  startEngine,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { startPrometheus, type TestPrometheus } from "./prometheus-server.js";
import { CHECKED_NAMES, expectedSamples, SETTLES } from "./remote-write-oracle.js";

const SELECTOR = `{__name__=~"${CHECKED_NAMES.join("|")}", quantile=~"0.99|"}`;

let nats: TestNats;
let nc: NatsConnection;
let engine: CliProcess;
let prom: TestPrometheus;
const dir = tempDir("remote-write");
const started: CliProcess[] = [];

function startRole(url: string, consumer: string, extra: string[] = []): CliProcess {
  const p = spawnTidemark([
    "remote-write",
    "--url",
    url,
    "--nats",
    nats.url,
    "--data",
    join(dir, "rw"),
    "--consumer",
    consumer,
    "--metrics-port",
    "0",
    ...extra,
  ]);
  started.push(p);
  return p;
}

const metricsOf = async (role: CliProcess): Promise<string> =>
  (await fetch(((await role.ready)["remoteWrite"] as { metrics: string }).metrics)).text();

/** Until the consumer acknowledged every TM_PANES message there is. */
async function drained(consumer: string, timeoutMs = 30_000): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await waitFor(
    async () => {
      const last = (await jsm.streams.info("TM_PANES")).state.last_seq;
      const info = await jsm.consumers.info("TM_PANES", consumer).catch(() => undefined);
      return info !== undefined && info.ack_floor.stream_seq >= last && info.num_ack_pending === 0;
    },
    timeoutMs,
    `${consumer} to acknowledge all of TM_PANES`,
  );
}

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connectNats(nats.url);
  engine = startEngine(nats.url, join(dir, "engine"), ["--idle-timeout", "1h"]);
  prom = await startPrometheus(dir);
  await engine.ready;
}, 60_000);

afterAll(async () => {
  for (const p of [...started, engine])
    if (p?.child.exitCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  await prom?.stop();
  await nc?.close();
  await nats?.stop();
});

describe("tidemark remote-write", () => {
  it("writes the settled panes to Prometheus: through a 20 s outage and a SIGKILL, nothing lost or doubled", async () => {
    // Four minutes of traffic ending ten minutes ago, replayed at 600 events/s (~20 s of wall clock).
    const events = makeRecording({ events: 12_000, seed: 11, startMs: Date.now() - 14 * 60_000 });
    const role = startRole(prom.writeUrl, "rw-prom", ["--batch-size", "300"]);
    await role.ready;
    const backfill = runBackfill(nats.url, writeRecording(dir, events), ["--rate", "600"]);

    // Prometheus goes away for 20 s once the role has written something.
    await waitFor(
      async () =>
        (metricValue(await metricsOf(role), "tidemark_remote_write_samples_total", { outcome: "sent" }) ?? 0) > 0,
      30_000,
      "a first batch accepted",
    );
    await prom.stop();
    const down = Date.now();
    await waitFor(
      async () =>
        (metricValue(await metricsOf(role), "tidemark_remote_write_requests_total", { code: "error" }) ?? 0) > 0,
      20_000,
      "a failed attempt",
    );
    await waitFor(() => Date.now() - down >= 20_000, 25_000, "20 s of outage", 250);
    await prom.start();

    // Killed once it writes again (a backlog is queued): then started again on the same state.
    const sentBefore =
      metricValue(await metricsOf(role), "tidemark_remote_write_samples_total", { outcome: "sent" }) ?? 0;
    await waitFor(
      async () =>
        (metricValue(await metricsOf(role), "tidemark_remote_write_samples_total", { outcome: "sent" }) ?? 0) >
        sentBefore,
      30_000,
      "a batch after the outage",
    );
    role.child.kill("SIGKILL");
    await role.exited;
    const beforeResume = await prom.samples(SELECTOR);
    const summary = await backfill;
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
    const resumed = startRole(prom.writeUrl, "rw-prom", ["--batch-size", "300"]);
    await resumed.ready;
    await drained("rw-prom");

    const panes = [...dedupePanes(await readStream(nc, "TM_PANES")).values()];
    const expected = expectedSamples(panes);
    expect(panes.filter((p) => p.policy === "billing" && p.kind === "final").length).toBeGreaterThan(100);
    const got = await prom.samples(SELECTOR);
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [k, list] of expected) expect(got.get(k), k).toEqual(list);
    // What Prometheus held when the role was killed is unchanged.
    for (const [k, list] of beforeResume) expect(got.get(k)?.slice(0, list.length), k).toEqual(list);
    expect(beforeResume.size).toBeGreaterThan(0);

    // Early, late and unsettled kinds never reach the receiver; each policy's settling kind does.
    const kinds = await prom.samples('{__name__=~"tidemark_.+", pane_kind!~"on-time|final"}');
    expect(kinds.size).toBe(0);
    for (const [policy, kind] of Object.entries(SETTLES)) {
      const series = await prom.samples(`tidemark_requests{policy="${policy}"}`);
      expect(series.size, policy).toBeGreaterThan(0);
      for (const k of series.keys()) expect(k, policy).toContain(`pane_kind="${kind}"`);
    }
    // The all-services level is the merge stage's (not run here): no tidemark_all_* series.
    const text = await metricsOf(resumed);
    expect(metricValue(text, "tidemark_remote_write_samples_pending")).toBe(0);
    // The kill left work behind: the resumed role wrote some of it.
    expect(metricValue(text, "tidemark_remote_write_samples_total", { outcome: "sent" })).toBeGreaterThan(0);
    expect(metricValue(text, "tidemark_remote_write_samples_total", { outcome: "failed" })).toBe(0);
    expect(metricValue(text, "tidemark_remote_write_samples_total", { outcome: "dropped" })).toBe(0);
    const newest = Math.max(...[...expected.values()].map((l) => (l.at(-1) as [number, number])[0]));
    expect(metricValue(text, "tidemark_remote_write_highest_sent_timestamp_seconds")).toBeLessThanOrEqual(
      newest / 1000,
    );
    await checkMetrics(text);
  }, 120_000);

  it("a receiver that answers 400: counted, logged, not retried, and the role moves on", async () => {
    const seen: { headers: IncomingHttpHeaders; bytes: number }[] = [];
    const refusing = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen.push({ headers: req.headers, bytes: Buffer.concat(chunks).length });
        res.writeHead(400, { "content-type": "text/plain" }).end("out of order sample");
      });
    });
    await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/api/v1/write`;
      const role = startRole(url, "rw-refused");
      await role.ready;
      await drained("rw-refused");
      const text = await metricsOf(role);
      const failed = metricValue(text, "tidemark_remote_write_samples_total", { outcome: "failed" }) ?? 0;
      const requests = metricValue(text, "tidemark_remote_write_requests_total", { code: "400" }) ?? 0;
      expect(failed).toBeGreaterThan(0);
      expect(metricValue(text, "tidemark_remote_write_samples_total", { outcome: "sent" })).toBe(0);
      expect(metricValue(text, "tidemark_remote_write_samples_retried_total")).toBe(0);
      // Every request was answered 400 once: no retry.
      expect(requests).toBe(seen.length);
      expect(role.output()).toContain("the receiver refused a batch (not retried)");
      const h = seen[0]?.headers ?? {};
      expect(h["content-encoding"]).toBe("snappy");
      expect(h["content-type"]).toBe("application/x-protobuf");
      expect(h["x-prometheus-remote-write-version"]).toBe("0.1.0");
    } finally {
      await new Promise((r) => refusing.close(r));
    }
  }, 60_000);
});

/** `promtool check metrics` on the text (from PATH). */
function checkMetrics(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = execFile("promtool", ["check", "metrics"], (err, stdout, stderr) =>
      err ? reject(new Error(`promtool check metrics: ${stdout}${stderr}`)) : resolve(),
    );
    p.stdin?.end(text);
  });
}
