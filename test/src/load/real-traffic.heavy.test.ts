/**
 * Real traffic on the default stack (docs/operations.md, "Capacity"): `tidemark up --no-demo` with its
 * defaults — sessions on, one worker and the merge operator — and only billing's grace shortened (to
 * keep the suite's time), then `tidemark load` at 10,000 events/s for 20 s from 20,000 users with the
 * seed's lateness. Every event ingest accepted is in billing's final service panes exactly once
 * (count and errors per service and 10 s window, against the load's own ledger); no 5xx; the
 * engine's own pipeline-lag histogram has p99 ≤ 250 ms; its RSS stays under 600 MB; TM_PANES holds
 * at most 100 bytes per accepted event; and billing's session cells are exactly a brute-force
 * sessionization of the accepted events (sessions ended per service and window under the gap rule).
 * It runs alone (vitest.heavy.config.ts): a second test on the same two cores would be the load.
 */
import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICIES } from "@tidemark/engine/core";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Pane } from "@tidemark/engine/protocol";
import { spawnTidemark, waitFor, type CliProcess } from "../index.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  metricValue,
  readStream,
  waitForStatus,
} from "../engine/engine-fixtures.js";
import { sessionCells, type SessionEvent } from "../sessions/sessionize.js";

const RATE = 10_000;
const SECONDS = 20;
const USERS = 20_000;
const GAP_MS = 60_000;
const WINDOW_MS = 10_000;
const BILLING_GRACE_MS = 30_000;
const RSS_BOUND_KB = 600 * 1024;
const DONE = "tidemark load done ";

interface Ledger {
  windowMs: number;
  services: Record<string, Record<string, { count: number; errors: number }>>;
}

/** The default policies, billing's grace shortened; everything else as `tidemark up` ships it. */
function config(): object {
  const policies = DEFAULT_POLICIES.map((p) => ({
    name: p.name,
    label: p.label,
    watermark: { kind: "arrival-lag", lag: `${(p.watermark as { lagMs: number }).lagMs}ms` },
    grace: `${p.name === "billing" ? BILLING_GRACE_MS : p.graceMs}ms`,
    ...(p.earlyEveryMs === null ? {} : { earlyEvery: `${p.earlyEveryMs}ms` }),
    ...(p.lateEveryMs === null ? {} : { lateEvery: `${p.lateEveryMs}ms` }),
    mode: p.mode,
  }));
  return { policies };
}

function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function readRecord(file: string): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const line of createInterface({ input: createReadStream(file) }))
    if (line !== "") out.push(JSON.parse(line) as SessionEvent);
  return out;
}

/** p99 of a Prometheus histogram is within `le` when 99 % of its count is in buckets up to `le`. */
function shareWithin(metrics: string, name: string, le: string): number {
  const count = metricValue(metrics, `${name}_count`) ?? 0;
  return count === 0 ? 0 : (metricValue(metrics, `${name}_bucket`, { le }) ?? 0) / count;
}

describe("the default stack under real traffic", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-real-traffic-"));
  let up: CliProcess | undefined;
  afterAll(async () => {
    if (up?.child.pid !== undefined) {
      up.child.kill("SIGTERM");
      await up.exited;
    }
  });

  it("holds 10k events/s from 20k users: exact billing, sessions as brute force, lag, memory and output bounded", async () => {
    const configFile = join(dir, "tidemark.config.json");
    writeFileSync(configFile, JSON.stringify(config()));
    up = spawnTidemark(
      [
        "up",
        "--no-demo",
        "--config",
        configFile,
        "--data",
        join(dir, "data"),
        "--ingest-port",
        "0",
        "--dashboard-port",
        "0",
      ],
      { cwd: dir, readyTimeoutMs: 60_000 },
    );
    const ready = await up.ready;
    const pids = ready.pids as Record<string, number>;
    const engineMetrics = (ready.engine as { metrics: string }).metrics;
    const peak: Record<string, number> = {};
    const sampler = setInterval(() => {
      for (const [role, pid] of Object.entries(pids)) peak[role] = Math.max(peak[role] ?? 0, rssKb(pid));
    }, 250);
    const accepted = join(dir, "accepted.json");
    const record = join(dir, "record.ndjson");
    const load = spawnTidemark(
      [
        "load",
        ...["--rate", String(RATE), "--duration", `${SECONDS}s`, "--users", String(USERS)],
        ...["--ingest", String(ready.ingest), "--token", String(ready.token), "--nats", String(ready.nats)],
        ...["--accepted", accepted, "--record", record],
      ],
      { env: { TIDEMARK_NATS_TOKEN: String(ready.natsToken) } },
    );
    expect(await load.exited, load.output()).toBe(0);
    clearInterval(sampler);
    const doneLine =
      load
        .output()
        .split("\n")
        .find((l) => l.startsWith(DONE)) ?? "";
    const done = JSON.parse(doneLine.slice(DONE.length)) as Record<string, number | boolean>;
    expect(done.http5xx).toBe(0);
    expect(done.exact).toBe(true);
    expect(done.accepted).toBe(done.generated);
    expect(done.acceptedPerSec as number).toBeGreaterThan(0.9 * RATE);

    // The engine's own histogram over everything it handled.
    const metrics = await (await fetch(engineMetrics)).text();
    expect(shareWithin(metrics, "tidemark_engine_pipeline_lag_seconds", "0.25")).toBeGreaterThanOrEqual(0.99);
    expect(peak.engine).toBeGreaterThan(0);
    expect(peak.engine as number, JSON.stringify(peak)).toBeLessThanOrEqual(RSS_BOUND_KB);

    const events = await readRecord(record);
    expect(events.length).toBe(done.accepted);
    // Billing closes the last sessions (last event + gap) once its W passes their windows' end + grace.
    const lastTs = events.reduce((m, e) => Math.max(m, e.ts), -Infinity);
    const billing = DEFAULT_POLICIES.find((p) => p.name === "billing") as (typeof DEFAULT_POLICIES)[number];
    const lag = (billing.watermark as { lagMs: number }).lagMs;
    const settled = Math.floor((lastTs + GAP_MS) / WINDOW_MS) * WINDOW_MS + WINDOW_MS + BILLING_GRACE_MS + lag;
    const nc = await connectNats(String(ready.nats), String(ready.natsToken));
    try {
      await waitForStatus(
        nc,
        (s) => s.worker !== "merge-0" && (s.logTime ?? 0) >= settled,
        180_000,
        "billing's W past the last session",
      );
      const ledger = JSON.parse(readFileSync(accepted, "utf8")) as Ledger;
      const wantWindows = new Map<string, { count: number; errors: number }>();
      for (const [service, windows] of Object.entries(ledger.services))
        for (const [start, c] of Object.entries(windows))
          wantWindows.set(`billing|${encodeURIComponent(service)}|${WINDOW_MS}|${start}`, c);
      const wantSessions = new Map<string, { count: number; errors: number; events: number }>();
      for (const [key, c] of sessionCells(events, GAP_MS, WINDOW_MS)) {
        const [service, start] = key.split("|") as [string, string];
        const id = `billing|sessions:${encodeURIComponent(service)}|${WINDOW_MS}|${start}`;
        wantSessions.set(id, { count: c.count, errors: c.errors, events: c.events });
      }
      let finals = new Map<string, Pane>();
      await waitFor(
        async () => {
          finals = new Map(
            [...lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values())].filter(
              ([, p]) => p.policy === "billing" && p.kind === "final" && p.window.end - p.window.start === WINDOW_MS,
            ),
          );
          return [...wantWindows.keys(), ...wantSessions.keys()].every((id) => finals.has(id));
        },
        60_000,
        "billing's final panes of every window the load touched",
        2_000,
      );
      const windows = new Map<string, { count: number; errors: number }>();
      const sessions = new Map<string, { count: number; errors: number; events: number }>();
      for (const [id, p] of finals) {
        if (p.key.route !== undefined || p.key.service === "*" || p.value.count === 0) continue;
        if (p.sessions) sessions.set(id, { count: p.value.count, errors: p.value.errors, events: p.sessions.events });
        else windows.set(id, { count: p.value.count, errors: p.value.errors });
      }
      expect(windows).toEqual(wantWindows);
      expect(sessions).toEqual(wantSessions);

      const jsm = await jetstreamManager(nc);
      const panesBytes = (await jsm.streams.info("TM_PANES")).state.bytes;
      const within = shareWithin(metrics, "tidemark_engine_pipeline_lag_seconds", "0.25");
      console.log(
        `real traffic: ${done.acceptedPerSec}/s accepted, ${(100 * within).toFixed(2)} % of events within 250 ms of lag, ` +
          `peak RSS ${JSON.stringify(peak)} kB, TM_PANES ${(panesBytes / (done.accepted as number)).toFixed(1)} B per event`,
      );
      expect(panesBytes / (done.accepted as number)).toBeLessThanOrEqual(100);
    } finally {
      await nc.close();
    }
  });
});
