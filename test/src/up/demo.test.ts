import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeEventBatch, STREAM_EVENTS, type TelemetryEvent } from "@tidemark/engine/protocol";
import { DEMO_CATALOG } from "@tidemark/deploy";
import { spawnTidemark, waitFor, type CliProcess } from "../index.js";
import { startIngestProcess, type IngestProcess } from "../harness/ingest-process.js";
import { readStream } from "../cluster/stream-readback.js";

const TOKEN = "demo-test-token-1";

function summary(demo: CliProcess): Record<string, number> {
  const line = demo
    .output()
    .split("\n")
    .find((l) => l.startsWith("tidemark demo done "));
  if (!line) throw new Error(`no summary line:\n${demo.output()}`);
  return JSON.parse(line.slice("tidemark demo done ".length)) as Record<string, number>;
}

describe("tidemark demo against a real ingest", () => {
  let rig: IngestProcess;

  beforeAll(async () => {
    rig = await startIngestProcess(TOKEN);
  });
  afterAll(async () => {
    await rig?.stop();
  });

  it("sends realistic traffic: every service, late events really late and failing more often with --corr", async () => {
    const before = (await readStream(rig.nc, STREAM_EVENTS)).length;
    const demo = spawnTidemark(
      ["demo", "--ingest", rig.url, "--rate", "800", "--corr", "0.5", "--duration", "12s", "--seed", "3"],
      {
        env: { TIDEMARK_INGEST_TOKENS: TOKEN },
      },
    );
    expect(await demo.exited).toBe(0);
    const stats = summary(demo);
    const stored = (await readStream(rig.nc, STREAM_EVENTS)).slice(before).flatMap((m) => decodeEventBatch(m.body));
    expect(stored.length).toBe(stats.accepted);
    expect(stats.accepted).toBeGreaterThan(5000);
    expect(new Set(stored.map((e) => e.service))).toEqual(new Set(DEMO_CATALOG.map((s) => s.service)));
    // Late events arrive late (ts well behind ingest_ts) and, with --corr 0.5, fail far more often.
    const late = stored.filter((e) => e.ingest_ts - e.ts > 5000);
    const onTime = stored.filter((e) => e.ingest_ts - e.ts < 2000);
    expect(late.length).toBeGreaterThan(10);
    expect(errorRate(late)).toBeGreaterThan(errorRate(onTime) + 0.2);
    expect(demo.output()).toMatch(/\d+ events\/s accepted/);
    console.log(
      `demo: ${late.length} of ${stored.length} arrived >5 s late; errors ${(100 * errorRate(late)).toFixed(0)}% late vs ${(100 * errorRate(onTime)).toFixed(1)}% on time`,
    );
  });

  it("rides out NATS going away (503 + Retry-After): every event it counts as accepted is stored exactly once", async () => {
    const before = (await readStream(rig.nc, STREAM_EVENTS)).length;
    const demo = spawnTidemark(["demo", "--ingest", rig.url, "--rate", "400", "--duration", "12s", "--seed", "7"], {
      env: { TIDEMARK_INGEST_TOKENS: TOKEN },
    });
    await demo.ready;
    // NATS goes away mid-run: once some of this demo's events are stored (was a fixed 3 s).
    await waitFor(
      async () => (await readStream(rig.nc, STREAM_EVENTS)).length > before + 5,
      30_000,
      "some of the demo's events stored",
      200,
    );
    await rig.nats.kill();
    // The outage lasts until ingest has answered the demo's retries with 503 twice (was a fixed 2 s).
    await waitFor(async () => (await answered503(rig.url)) >= 2, 20_000, "two 503 answers to the demo's retries", 100);
    await rig.nats.start();
    expect(await demo.exited).toBe(0);
    const stats = summary(demo);
    expect(stats.retries).toBeGreaterThanOrEqual(2);
    expect(stats.rejected).toBe(0);
    const stored = (await readStream(rig.nc, STREAM_EVENTS)).slice(before).flatMap((m) => decodeEventBatch(m.body));
    // A retried batch carries the same Idempotency-Key: stored once, so stored equals accepted.
    expect(stored.length).toBe(stats.accepted);
    console.log(
      `demo: ${stats.accepted} accepted = ${stored.length} stored after ${stats.retries} retries through the outage`,
    );
  });
});

/** Write requests ingest answered 503 so far (its /metrics, every endpoint). */
async function answered503(ingestUrl: string): Promise<number> {
  const text = await (await fetch(`${ingestUrl}/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith("tidemark_ingest_request_duration_seconds_count{") && l.includes('status="503"'))
    .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
}

function errorRate(es: TelemetryEvent[]): number {
  return es.filter((e) => e.status >= 500).length / es.length;
}
