/**
 * A whole two-stage dataflow on one data directory, as `tidemark up` runs it (docs/operations.md,
 * "Rescaling"), against a real nats-server: merge operators and engine workers as `tidemark`
 * processes started and stopped (SIGTERM: final checkpoints; SIGKILL) at any layout, a recording fed
 * step by step (harness/stepped-backfill.ts) so every stop lands mid-input with the input held,
 * what each process read (its `tidemark_engine_events_total`), and each pane id's settled value.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { decodeEventBatch, eventsSubject, type Pane, type TelemetryEvent } from "@tidemark/engine/protocol";
import type { CliProcess } from "../harness/processes.js";
import type { SteppedBackfill } from "../harness/stepped-backfill.js";
import { metricValue, readMessages, readStream, startEngine, waitForStatus } from "../engine/engine-fixtures.js";
import { startMerge } from "../merge/merge-fixtures.js";

/** The default partition count, which every role here runs with. */
export const PARTITIONS = 8;

export const FAST = ["--checkpoint-every", "1s", "--checkpoint-min-wall", "50ms", "--status-every", "200ms"];
/** The merge stage waits for a worker being restarted rather than leave it out as idle. */
export const MERGE_FAST = [...FAST, "--idle-timeout", "120s"];

export interface Role {
  id: string;
  p: CliProcess;
  ready: Record<string, unknown>;
}

/** The restored cut a role's ready line reports (docs/decisions/0057-elastic-workers.md). */
export interface ReadyCut {
  cut: string;
  files: Array<{ file: string; partitions: number[] }>;
  fresh: number[];
  resumeAfter: Record<string, number>;
}

export async function startWorker(url: string, data: string, partitions: string, extra: string[] = []): Promise<Role> {
  const p = startEngine(url, data, ["--partitions", partitions, ...FAST, ...extra]);
  const ready = (await p.ready).engine as Record<string, unknown>;
  return { id: ready.worker as string, p, ready };
}

export async function startMergeRole(url: string, data: string, extra: string[] = []): Promise<Role> {
  const p = startMerge(url, data, [...MERGE_FAST, ...extra]);
  const ready = (await p.ready).merge as Record<string, unknown>;
  return { id: ready.worker as string, p, ready };
}

export function cutOf(r: Role): ReadyCut | null {
  return (r.ready.restoredCut as ReadyCut | null) ?? null;
}

/** Events a worker process read and handed to its core since it started. */
export async function eventsRead(r: Role): Promise<number> {
  const text = await (await fetch(r.ready.metrics as string)).text();
  return metricValue(text, "tidemark_engine_events_total") ?? 0;
}

/** Every worker's status shows log time at `t` or later (a timeout names the worker's own last status). */
export async function caughtUp(nc: NatsConnection, workers: readonly Role[], t: number): Promise<void> {
  for (const w of workers) {
    let last: unknown = null;
    try {
      await waitForStatus(
        nc,
        (s) => {
          if (s.worker !== w.id) return false;
          last = { logTime: s.logTime, partitions: s.partitions, heldBackBy: s.heldBackBy };
          return (s.logTime ?? 0) >= t;
        },
        60_000,
        `${w.id} at log time ${t}`,
      );
    } catch (err) {
      const said = w.p
        .output()
        .split("\n")
        .filter((l) => /"level":(40|50|60)/.test(l))
        .slice(-5)
        .join("\n");
      throw new Error(`${w.id} not at log time ${t}; its last status: ${JSON.stringify(last)}; it warned:\n${said}`, {
        cause: err,
      });
    }
  }
}

/** Per TM_EVENTS partition, the stream sequence and event count of each stored message. */
export async function eventsByPartition(
  nc: NatsConnection,
  partitions: number,
): Promise<Array<Array<[number, number]>>> {
  const out = Array.from({ length: partitions }, (): Array<[number, number]> => []);
  for (const m of await readMessages(nc, "TM_EVENTS")) {
    const p = Array.from({ length: partitions }, (_, i) => i).find((i) => eventsSubject(i) === m.subject);
    if (p === undefined) continue;
    (out[p] as Array<[number, number]>).push([m.seq, m.data.length === 0 ? 0 : decodeEventBatch(m.data).length]);
  }
  return out;
}

/** Events stored in partition p after sequence `after` (what a restore at `after` reads again, when all of it was read before). */
export function eventsAfter(stored: Array<Array<[number, number]>>, p: number, after: number): number {
  return (stored[p] ?? []).filter(([seq]) => seq > after).reduce((n, [, k]) => n + k, 0);
}

/** Each pane id's last pane (highest seq; of equal seqs the later in the stream): its kind and value. */
export async function settledPanes(nc: NatsConnection): Promise<Map<string, string>> {
  const last = new Map<string, Pane>();
  for (const line of await readStream(nc, "TM_PANES")) {
    const p = JSON.parse(line) as Pane;
    const had = last.get(p.id);
    if (had === undefined || p.seq >= had.seq) last.set(p.id, p);
  }
  return new Map([...last].map(([id, p]) => [id, JSON.stringify({ kind: p.kind, value: p.value })]));
}

/** Both maps hold the same ids with the same values; a mismatch names the first few. */
export function sameSettled(
  got: Map<string, string>,
  want: Map<string, string>,
): { missing: string[]; extra: string[]; differ: string[] } {
  const missing = [...want.keys()].filter((k) => !got.has(k)).slice(0, 10);
  const extra = [...got.keys()].filter((k) => !want.has(k)).slice(0, 10);
  const differ = [...want]
    .filter(([k, v]) => got.has(k) && got.get(k) !== v)
    .map(([k]) => `${k}: ${got.get(k)} != ${want.get(k)}`)
    .slice(0, 10);
  return { missing, extra, differ };
}

export type { TelemetryEvent };

/** Feeds step by step, each step's heartbeat taken in by every worker, until `events` events are stored in TM_EVENTS. */
export async function feedShare(
  feed: SteppedBackfill,
  nc: NatsConnection,
  workers: () => readonly Role[],
  events: number,
): Promise<void> {
  let fed = 0;
  await feed.feedUntil(
    () => fed >= events,
    async (t) => {
      fed = (await eventsByPartition(nc, PARTITIONS)).flat().reduce((n, [, k]) => n + k, 0);
      await caughtUp(nc, workers(), t);
    },
    `${events} events stored`,
  );
}
