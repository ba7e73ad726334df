/**
 * Unbounded key cardinality meets a bound that is counted and visible, never an out-of-memory
 * (docs/semantics.md, "Configuration": serviceCap). 100,000 requests, each from a service of its
 * own (a bug or a hostile client), go through a real engine: every event is processed (about 4 s on
 * an idle machine, printed; the wait gives up after 180 s, which a 2-core machine at load 17 needed
 * more than 60 s of: a hang guard, not a timing claim),
 * the engine's peak resident memory stays under 450 MB, the first `serviceCap` services keep their
 * names and the rest fold into `(other)`, counted in tm.status and on /metrics — and every event is
 * still in a pane.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import { startTestNats, type TestNats } from "../index.js";
import type { CliProcess } from "../harness/processes.js";
import {
  connectNats,
  dedupePanes,
  metricValue,
  readStream,
  scrape,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
} from "./engine-fixtures.js";
import { publishBulk } from "./bulk-feed.js";

const SERVICES = 100_000;
const CAP = 2000;
const PARTITIONS = 8;
const T0 = Math.floor((Date.now() - 3_600_000) / 10_000) * 10_000;
/** When the wait for every event gives up (a hang guard: the machine may be loaded). */
const BOUND_MS = 180_000;
/** Event times over 4 s: one 10 s window, one 60 s window per service. */
const SPAN_MS = 4_000;

describe("100,000 distinct services", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let engine: CliProcess;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connectNats(nats.url);
    engine = startEngine(nats.url, join(tempDir("cardinality"), "data"), ["--partition-count", String(PARTITIONS)]);
    await engine.ready;
  });
  afterAll(async () => {
    if (engine && engine.child.exitCode === null) await stopGracefully(engine);
    await nc?.close();
    await nats?.stop();
  });

  it(
    "are all processed under 450 MB; past serviceCap they fold into (other), counted",
    async () => {
      const started = Date.now();
      // Then past the reference horizon (5 min) and billing's lag + grace: every window closes.
      const ends = [T0 + SPAN_MS + 400_000, T0 + SPAN_MS + 401_000];
      await publishBulk(nc, requests(), { partitions: PARTITIONS, idPrefix: "card", ends });
      const end = T0 + SPAN_MS + 400_000;
      const status = await waitForStatus(
        nc,
        (s) => s.eventsTotal === SERVICES && (s.logTime ?? 0) >= end,
        BOUND_MS - (Date.now() - started),
        "every event processed",
      );
      const tookMs = Date.now() - started;
      const peakRss = peakRssBytes(engine.child.pid as number);
      const metrics = await scrape(await engine.ready);

      console.log(`cardinality: ${SERVICES} services processed in ${tookMs} ms`);
      expect(peakRss).toBeLessThan(450 * 1024 * 1024);
      // Folded events, not services: the first CAP services keep their names.
      expect(status.overflow).toEqual({ services: SERVICES - CAP, routes: 0 });
      expect(metricValue(metrics, "tidemark_engine_key_overflow_events_total", { key: "service" })).toBe(
        SERVICES - CAP,
      );

      // Nothing refused: every event is in a final pane of billing (exact), named or (other).
      await stopGracefully(engine);
      const finals = [...dedupePanes(await readStream(nc, "TM_PANES")).values()].filter(
        (p) =>
          p.policy === "billing" &&
          p.kind === "final" &&
          p.key.route === undefined &&
          p.window.end - p.window.start === 10_000,
      );
      const other = finals.filter((p) => p.key.service === "(other)");
      expect(finals.reduce((n, p) => n + p.value.count, 0)).toBe(SERVICES);
      expect(new Set(finals.map((p) => p.key.service)).size).toBe(CAP + 1);
      expect(other.reduce((n, p) => n + p.value.count, 0)).toBe(SERVICES - CAP);
    },
    BOUND_MS + 60_000,
  );
});

/** One request per service, all within SPAN_MS. */
function* requests(): Generator<TelemetryEvent> {
  for (let i = 0; i < SERVICES; i++) {
    const t = T0 + Math.floor((i * SPAN_MS) / SERVICES);
    yield {
      ts: t,
      ingest_ts: t,
      service: `svc-${i}`,
      route: "/",
      status: i % 20 === 0 ? 503 : 200,
      latency_ms: 1 + (i % 100),
      user: `u${i % 1000}`,
    };
  }
}

/** Peak resident set of a process (VmHWM), bytes. */
function peakRssBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}
