/**
 * The two-stage dataflow against a real nats-server (docs/decisions/0029-two-stage-dataflow.md):
 * workers and a merge operator as `tidemark` processes, a backfilled recording, and what TM_PANES
 * holds of the all-services (`*`) key; plus the recording's own truth for that key.
 */
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { ALL_SERVICES, PARTIAL_TICK_MS, type Pane, type TelemetryEvent } from "@tidemark/engine/protocol";
import { spawnTidemark, type CliProcess } from "../harness/processes.js";
import { startTestNats, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  normalized,
  readStream,
  startEngine,
  waitForStatus,
} from "../engine/engine-fixtures.js";

export const MERGE_ID = "merge-0";

export function startMerge(natsUrl: string, dataDir: string, extra: string[] = []): CliProcess {
  return spawnTidemark(["merge", "--nats", natsUrl, "--data", dataDir, "--metrics-port", "0", ...extra]);
}

/** A fresh nats-server and a connection to it. */
export interface Stack {
  nats: TestNats;
  nc: NatsConnection;
  workers: CliProcess[];
  merge: CliProcess;
  data: string;
}

/** Starts nats, one worker per entry of `split` (its extra flags) and the merge operator. */
export async function startStack(
  data: string,
  split: string[][],
  mergeFlags: string[] = [],
  workerFlags: string[] = [],
): Promise<Stack> {
  const nats = await startTestNats();
  const nc = await connectNats(nats.url);
  const workers = split.map((args) => startEngine(nats.url, join(data, "w"), [...args, ...workerFlags]));
  const merge = startMerge(nats.url, join(data, "m"), mergeFlags);
  await Promise.all([...workers.map((w) => w.ready), merge.ready]);
  return { nats, nc, workers, merge, data };
}

/** The merge operator's log time reached the recording's last tick. */
export async function waitForMergeEnd(nc: NatsConnection, end: number, timeoutMs = 60_000): Promise<void> {
  const lastTick = Math.floor(end / PARTIAL_TICK_MS) * PARTIAL_TICK_MS;
  await waitForStatus(
    nc,
    (s) => s.worker === MERGE_ID && (s.logTime ?? 0) >= lastTick,
    timeoutMs,
    "the merge at the end",
  );
}

/** Every `*` pane of TM_PANES, deduplicated on (id, seq) (throws if a replay differs), as normalized JSON by id#seq. */
export async function starPanes(nc: NatsConnection): Promise<Map<string, string>> {
  const all = dedupePanes(await readStream(nc, "TM_PANES"));
  const out = new Map<string, string>();
  for (const [k, p] of all) if (p.key.service === ALL_SERVICES) out.set(k, normalized(p));
  return out;
}

/** Every pane of TM_PANES, deduplicated. */
export async function allPanes(nc: NatsConnection): Promise<Pane[]> {
  return [...dedupePanes(await readStream(nc, "TM_PANES")).values()];
}

/**
 * The recording's truth for the `*` key of an arrival-lag policy: an event counts for window
 * [s, e) unless e + grace <= W at its tick's start (the merge stage judges a tick's records at its
 * start, ADR 0029), W = that time − lag. By pane id: count, errors, distinct users, latencies.
 */
export function starTruth(
  events: readonly TelemetryEvent[],
  policy: { name: string; lagMs: number; graceMs: number },
  sizeMs: number,
): Map<string, { count: number; errors: number; users: Set<string>; latencies: number[] }> {
  const out = new Map<string, { count: number; errors: number; users: Set<string>; latencies: number[] }>();
  for (const e of events) {
    const start = Math.floor(e.ts / sizeMs) * sizeMs;
    const at = Math.floor(e.ingest_ts / PARTIAL_TICK_MS) * PARTIAL_TICK_MS;
    if (start + sizeMs + policy.graceMs <= at - policy.lagMs) continue;
    const id = `${policy.name}|${encodeURIComponent(ALL_SERVICES)}|${sizeMs}|${start}`;
    let t = out.get(id);
    if (!t) out.set(id, (t = { count: 0, errors: 0, users: new Set(), latencies: [] }));
    t.count++;
    if (e.status >= 500) t.errors++;
    t.users.add(e.user);
    t.latencies.push(e.latency_ms);
  }
  return out;
}

/** The exact q-quantile of `xs` by the product's rank, ⌊q·(n−1)⌋ (sketches/src/ddsketch.ts, quantile). */
export function exactQuantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))] as number;
}

/** Kills every process of the stack that still runs (SIGKILL: a test's leftovers), closes NATS. */
export async function endStack(s: Stack | undefined): Promise<void> {
  if (!s) return;
  for (const p of [...s.workers, s.merge]) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await s.nc.close().catch(() => undefined);
  await s.nats.stop();
}
