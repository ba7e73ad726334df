/**
 * `tidemark load` against a real nats-server and a real `tidemark ingest`: what its `--accepted`
 * ledger and `--record` file say was accepted is exactly what TM_EVENTS holds
 * (docs/operations.md, "`tidemark load`").
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBJECT_STATUS, isError, type TelemetryEvent } from "@tidemark/engine/protocol";
import { spawnTidemark, waitFor, type CliProcess } from "../index.js";
import { startIngestProcess, type IngestProcess } from "../harness/ingest-process.js";
import { readEventsStream } from "../ingest/ingest-fixture.js";

const TOKEN = "load-test-token-42";
const DONE = "tidemark load done ";

interface Ledger {
  windowMs: number;
  services: Record<string, Record<string, { count: number; errors: number }>>;
  total: number;
  exact: boolean;
}

/** The ledger's shape, computed from events: service → window start → {count, errors}. */
function ledgerOf(events: readonly TelemetryEvent[], windowMs: number): Ledger["services"] {
  const out: Ledger["services"] = {};
  for (const e of events) {
    const start = String(Math.floor(e.ts / windowMs) * windowMs);
    const w = ((out[e.service] ??= {})[start] ??= { count: 0, errors: 0 });
    w.count++;
    if (isError(e.status)) w.errors++;
  }
  return out;
}

function doneOf(load: CliProcess): Record<string, number | string | boolean | null> {
  const line = load
    .output()
    .split("\n")
    .find((l) => l.startsWith(DONE));
  if (line === undefined) throw new Error(`no done line:\n${load.output()}`);
  return JSON.parse(line.slice(DONE.length)) as Record<string, number | string | boolean | null>;
}

/** The recording format's fields of an event, as one comparable string. */
const recorded = (e: Pick<TelemetryEvent, "ts" | "service" | "route" | "status" | "latency_ms" | "user">): string =>
  JSON.stringify([e.ts, e.service, e.route, e.status, e.latency_ms, e.user]);

describe("tidemark load against a real ingest", () => {
  let rig: IngestProcess;
  const dir = mkdtempSync(join(tmpdir(), "tidemark-load-"));

  beforeAll(async () => {
    rig = await startIngestProcess(TOKEN);
  });
  afterAll(async () => {
    await rig?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts every accepted event exactly once: its ledger and record equal TM_EVENTS", async () => {
    // A stand-in for an engine worker's tm.status (EngineStatusMessage), so the lag path is exercised.
    const status = setInterval(
      () =>
        rig.nc.publish(SUBJECT_STATUS, JSON.stringify({ worker: "engine-test", pipelineLag: { p50: 12, p99: 345 } })),
      200,
    );
    const accepted = join(dir, "accepted.json");
    const record = join(dir, "record.ndjson");
    const load = spawnTidemark(
      ["load", "--rate", "2000", "--duration", "3s", "--ingest", rig.url, "--nats", rig.nats.url, "--seed", "5"].concat(
        ["--corr", "0.3", "--users", "5000", "--window", "1s", "--accepted", accepted, "--record", record],
      ),
      { env: { TIDEMARK_INGEST_TOKENS: TOKEN } },
    );
    const code = await load.exited;
    clearInterval(status);
    expect(code, load.output()).toBe(0);

    const done = doneOf(load);
    expect(done).toMatchObject({ rate: 2000, durationMs: 3000, shed: 0, unsent: 0, rejected: 0, exact: true });
    expect(done).toMatchObject({ http4xx: 0, lagWorker: "engine-test", lagP99Ms: 345, lagMaxP99Ms: 345 });
    expect(done.accepted).toBe(done.generated);
    expect(done.accepted).toBeGreaterThan(5000);
    expect(typeof done.httpP99Ms).toBe("number");
    expect(load.output()).toMatch(/t=1\.\ds target=2000\/s accepted=\d+\/s/);

    const stored = (await readEventsStream(rig.nc)).events;
    const ledger = JSON.parse(readFileSync(accepted, "utf8")) as Ledger;
    expect(ledger.exact).toBe(true);
    expect(ledger.windowMs).toBe(1000);
    expect(ledger.total).toBe(stored.length);
    expect(ledger.total).toBe(done.accepted);
    expect(ledger.services).toEqual(ledgerOf(stored, 1000));

    const lines = readFileSync(record, "utf8").trimEnd().split("\n");
    const events = lines.map((l) => JSON.parse(l) as TelemetryEvent & { sent_at: number });
    expect(events.map(recorded).sort()).toEqual(stored.map(recorded).sort());
    for (const e of events) expect(e.sent_at).toBeGreaterThanOrEqual(e.ts);
    // The late tail was really sent late: stored well after it happened.
    expect(stored.filter((e) => e.ingest_ts - e.ts >= 1000).length).toBeGreaterThan(100);
    console.log(
      `load: ${String(done.accepted)} accepted at ${String(done.acceptedPerSec)}/s, ` +
        `HTTP p50/p99 ${String(done.httpP50Ms)}/${String(done.httpP99Ms)} ms; ledger = record = TM_EVENTS`,
    );
  });

  it("stays exact through a NATS outage: batches answered 503 are resent with their key and stored once", async () => {
    const before = (await readEventsStream(rig.nc)).events.length;
    const accepted = join(dir, "outage.json");
    const load = spawnTidemark(
      ["load", "--rate", "1000", "--duration", "4s", "--ingest", rig.url, "--seed", "6", "--accepted", accepted],
      { env: { TIDEMARK_INGEST_TOKENS: TOKEN } },
    );
    await waitFor(() => /total=[1-9]\d{2,}/.test(load.output()), 15_000, "the load to have batches accepted");
    await rig.nats.kill();
    await waitFor(() => /status 503: retrying/.test(load.output()), 15_000, "ingest to answer 503 and load to retry");
    await rig.nats.start();
    expect(await load.exited, load.output()).toBe(0);
    const done = doneOf(load);
    expect(done.retries).toBeGreaterThan(0);
    expect(done.http5xx).toBeGreaterThan(0);
    expect(done).toMatchObject({ shed: 0, unsent: 0, exact: true });
    await rig.reconnect();
    const stored = (await readEventsStream(rig.nc)).events.slice(before);
    const ledger = JSON.parse(readFileSync(accepted, "utf8")) as Ledger;
    expect(ledger.total).toBe(done.accepted);
    expect(stored.length).toBe(done.accepted);
    expect(ledger.services).toEqual(ledgerOf(stored, ledger.windowMs));
    console.log(`load: ${String(done.accepted)} accepted = stored through the outage, ${String(done.retries)} retries`);
  });
});
