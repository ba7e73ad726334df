/**
 * A bounded (event-time) policy live, with quiet partitions present (docs/semantics.md,
 * "Watermarks"): two services over eight partitions, sent through a real `tidemark ingest` (which
 * heartbeats every partition) to a real engine. Six partitions only ever see heartbeats; they leave
 * the event-time minimum after the idle timeout of log time, so the policy fires on every window
 * that ends `lag` before the largest event time. Before, a heartbeat-only partition held W at −∞
 * and nothing fired, ever.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { partitionOf, type Pane } from "@tidemark/engine/protocol";
import { spawnTidemark, startTestNats, waitFor, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import { connectNats, dedupePanes, readStream, startEngine, stopGracefully, tempDir } from "./engine-fixtures.js";

const WINDOW_MS = 2_000;
const LAG_MS = 1_000;
const SERVICES = ["checkout", "payments"];
const CONFIG = {
  windows: ["2s"],
  referenceHorizon: "10s",
  policies: [
    {
      name: "bounded",
      label: "bounded: 1 s",
      watermark: { kind: "bounded", lag: "1s" },
      grace: 0,
      mode: "accumulating",
    },
  ],
};

describe("a bounded policy with heartbeat-only partitions", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let ingest: CliProcess;
  let engine: CliProcess;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    const dir = tempDir("bounded-live");
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify(CONFIG));
    engine = startEngine(nats.url, join(dir, "data"), ["--config", config, "--idle-timeout", "2s"]);
    ingest = spawnTidemark(["ingest", "--port", "0", "--nats", nats.url]);
    await Promise.all([engine.ready, ingest.ready]);
  });
  afterAll(async () => {
    for (const p of [ingest, engine]) if (p && p.child.exitCode === null) await stopGracefully(p);
    await nc?.close();
    await nats?.stop();
  });

  it("fires on every window that ends lag before the largest event time", async () => {
    expect(new Set(SERVICES.map((s) => partitionOf(s, 8))).size).toBe(2);
    const url = `${(await ingest.ready).ingest as string}/v1/events`;
    let maxTs = -Infinity;
    let first = Infinity;
    const minEnd = Date.now() + 7_000;
    // At least 7 s, and until two full windows have ended lag before the newest event: with the first
    // event just past a window boundary, 7 s alone leaves one.
    const enough = (): boolean =>
      Date.now() >= minEnd && maxTs >= Math.ceil(first / WINDOW_MS) * WINDOW_MS + 2 * WINDOW_MS + LAG_MS;
    while (!enough()) {
      const ts = Date.now();
      maxTs = Math.max(maxTs, ts);
      first = Math.min(first, ts);
      const body = SERVICES.map((service) => JSON.stringify({ service, ts, latency_ms: 12, status: 200 })).join("\n");
      expect(
        (await fetch(url, { method: "POST", body, headers: { "content-type": "application/x-ndjson" } })).status,
      ).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Every window [s, s + 2 s) that ends by maxTs − lag, from the first full one on.
    const due: number[] = [];
    for (let end = Math.ceil(first / WINDOW_MS) * WINDOW_MS + WINDOW_MS; end <= maxTs - LAG_MS; end += WINDOW_MS)
      due.push(end);
    expect(due.length).toBeGreaterThanOrEqual(2);
    const expected = due.flatMap((end) => SERVICES.map((service) => `${service}@${end}`)).sort();
    let fired: string[] = [];
    await waitFor(
      async () => {
        const panes = [...dedupePanes(await readStream(nc, "TM_PANES")).values()] as Pane[];
        fired = panes
          .filter((p) => p.kind === "on-time" && p.key.route === undefined && due.includes(p.window.end))
          .map((p) => `${p.key.service}@${p.window.end}`)
          .sort();
        return fired.length >= expected.length;
      },
      20_000,
      "an on-time pane of every due window",
    ).catch(() => undefined);
    expect(fired).toEqual(expected);
  });
});
