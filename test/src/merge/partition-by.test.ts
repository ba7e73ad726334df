/**
 * `partitionBy: "service+route"` (docs/decisions/0032-partition-by-route.md) against a real
 * nats-server: one hot service's events spread over partitions of both workers; its service-level
 * panes then come from the merge stage, and they hold the same numbers as with `partitionBy:
 * "service"`, where one worker makes them alone; route panes and the all-services panes too. With
 * two merge partitions (docs/decisions/0033-merge-partitions.md) two merge operators share the
 * service keys, and the numbers are the same again.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ALL_SERVICES,
  PARTIAL_TICK_MS,
  partitionOfEvent,
  type CheckpointComplete,
  type Pane,
} from "@tidemark/engine/protocol";
import {
  lastPanes,
  makeRecording,
  readMessages,
  runBackfill,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
  bodyLines,
} from "../engine/engine-fixtures.js";
import { checkpointFiles } from "../engine/fleet.js";
import { killPoints, killSeed, logKillPlan } from "../harness/kill-plan.js";
import { SteppedBackfill } from "../harness/stepped-backfill.js";
import { allPanes, endStack, startMerge, startStack, waitForMergeEnd, type Stack } from "./merge-fixtures.js";

const SPLIT = [
  ["--partitions", "0-3"],
  ["--partitions", "4-7"],
];
/** "api" is two thirds of the traffic: the hot service. */
const SERVICES = ["api", "api", "api", "api", "web", "auth"];

/** Per billing pane id (final, the last of each id): what it counts. */
function billing(panes: Pane[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [id, p] of lastPanes(panes))
    if (p.policy === "billing")
      out.set(id, { count: p.value.count, errors: p.value.errors, users: p.value.users, p99: p.value.p99 });
  return out;
}

describe("partitionBy service+route (real NATS)", () => {
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const s of stacks) await endStack(s);
  });
  const dir = tempDir("partition-by");
  const events = makeRecording({ events: 4000, seed: 13, services: SERVICES });
  const file = writeRecording(dir, events);

  interface Run {
    panes: Pane[];
    /** TM_EVENTS subjects holding events. */
    subjects: Set<string>;
    /** Message ids of the TM_PANES messages holding service-level panes. */
    serviceMsgIds: string[];
    /** TM_CHECKPOINTS completions (with several merge partitions). */
    completes: CheckpointComplete[];
    /** The end-of-recording heartbeat's log time. */
    endOfRecordingTs: number;
  }

  async function run(name: string, by: string, mergePartitions = 1): Promise<Run> {
    const common = ["--partition-by", by, "--merge-partitions", String(mergePartitions)];
    const flags = [...common, "--idle-timeout", "120s", "--checkpoint-every", "1s", "--status-every", "100ms"];
    const s = await startStack(join(dir, name), SPLIT, flags, [...common, "--checkpoint-every", "1s"]);
    stacks.push(s);
    const more = Array.from({ length: mergePartitions - 1 }, (_, i) =>
      startMerge(s.nats.url, join(dir, name, "m"), [...flags, "--merge-partition", String(i + 1)]),
    );
    s.workers.push(...more); // stopped (and killed at the end) with the workers
    await Promise.all(more.map((m) => m.ready));
    // With two merge operators the recording is fed step by step (harness/stepped-backfill.ts, the
    // backfill's own messages) and merge-1 is SIGKILLed mid-input, the rest held until it is
    // restarted: it restores its own checkpoint and replays; nothing changes after dedupe.
    let end: number;
    if (mergePartitions > 1) {
      const feed = new SteppedBackfill(s.nc, events, { config: { partitionBy: by }, batch: 50, runId: name });
      end = feed.endOfRecordingTs;
      // At a seeded log time, past a checkpoint of merge-1's own.
      const first = (events[0] as (typeof events)[number]).ingest_ts;
      const lastIn = (events.at(-1) as (typeof events)[number]).ingest_ts;
      const seed = killSeed(13);
      const [point] = killPoints(seed, 1, first, lastIn) as [number];
      logKillPlan(`partition-by ${name}`, seed, [point], first);
      const cpDir = join(dir, name, "m", "checkpoints", "merge-1");
      let logTime = -Infinity;
      await feed.feedUntil(
        () => checkpointFiles(cpDir).length >= 1 && logTime >= point,
        async (t) => {
          // A merge operator's log time moves in ticks of its upstream partials (merge-fixtures.ts).
          const to = Math.floor(t / PARTIAL_TICK_MS) * PARTIAL_TICK_MS;
          const seen = await waitForStatus(
            s.nc,
            (st) => st.worker === "merge-1" && (st.logTime ?? 0) >= to,
            60_000,
            `merge-1 at log time +${to - first} ms`,
          );
          logTime = seen.logTime as number;
        },
        `seed ${seed}: a checkpoint of merge-1 and merge-1 at log time +${point - first} ms`,
        {
          // Past the point, the log time is held (nudges, harness/stepped-backfill.ts) until the
          // aligned checkpoint, started on merge-0's wall-time schedule, is written by merge-1.
          hold: () => logTime >= point && checkpointFiles(cpDir).length < 1,
          settle: () => {
            const now = Date.now();
            return waitForStatus(
              s.nc,
              (st) => st.worker === "merge-1" && st.wallTime > now,
              10_000,
              "merge-1 after the nudge",
            );
          },
        },
      );
      const at = `seed ${seed}: merge-1 killed at log time +${logTime - first} ms`;
      console.log(`partition-by ${name}: ${at} (input ends at +${lastIn - first} ms; ${feed.nudged} nudges)`);
      expect(logTime, at).toBeLessThan(lastIn);
      const victim = more[0] as (typeof more)[number];
      victim.child.kill("SIGKILL");
      await victim.exited;
      const again = startMerge(s.nats.url, join(dir, name, "m"), [...flags, "--merge-partition", "1"]);
      s.workers[s.workers.indexOf(victim)] = again;
      const ready = (await again.ready).merge as { worker: string; restoredFrom: unknown };
      expect(ready.worker).toBe("merge-1");
      expect(ready.restoredFrom).toMatch(/merge-1\/checkpoint-\d+\.tmck$/);
      await feed.finish();
    } else end = (await runBackfill(s.nats.url, file, ["--partition-by", by])).endOfRecordingTs;
    await waitForMergeEnd(s.nc, end);
    for (let m = 1; m < mergePartitions; m++)
      await waitForStatus(
        s.nc,
        (st) => st.worker === `merge-${m}` && (st.logTime ?? 0) >= end - 100,
        60_000,
        `merge-${m} at the end`,
      );
    const completes = mergePartitions > 1 ? await waitForComplete(s, mergePartitions) : [];
    // The other merge operators' status counts the completions they heard of.
    for (let m = 1; m < mergePartitions; m++)
      await waitForStatus(
        s.nc,
        (st) => st.worker === `merge-${m}` && (st.merge?.checkpoints?.completed ?? 0) >= 1,
        30_000,
        `merge-${m}'s status counting a completed checkpoint`,
      );
    await Promise.all([...s.workers, s.merge].map((p) => stopGracefully(p)));
    const subjects = new Set(
      (await readMessages(s.nc, "TM_EVENTS")).filter((m) => m.data.length > 0).map((m) => m.subject),
    );
    const serviceMsgIds = (await readMessages(s.nc, "TM_PANES"))
      .filter((m) =>
        bodyLines(m).some((l) => {
          const p = JSON.parse(l) as Pane;
          return p.key.route === undefined && p.key.service !== ALL_SERVICES;
        }),
      )
      .map((m) => m.msgId ?? "");
    return { panes: await allPanes(s.nc), subjects, serviceMsgIds, completes, endOfRecordingTs: end };
  }

  /** The aligned checkpoints completed so far, once one names every merge operator. */
  async function waitForComplete(s: Stack, mergePartitions: number): Promise<CheckpointComplete[]> {
    let got: CheckpointComplete[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      got = (await readMessages(s.nc, "TM_CHECKPOINTS"))
        .filter((m) => m.subject === "tm.checkpoints.complete")
        .map((m) => JSON.parse(m.body) as CheckpointComplete);
      if (got.some((c) => Object.keys(c.operators).filter((o) => o.startsWith("merge-")).length === mergePartitions))
        return got;
      await new Promise((r) => setTimeout(r, 250));
    }
    return got;
  }

  it("gives a hot service spread over both workers the same service, route and all-services numbers", async () => {
    const byService = await run("service", "service");
    const byRoute = await run("route", "service+route");
    // The hot service's events went to partitions of both workers.
    const hot = new Set(events.filter((e) => e.service === "api").map((e) => partitionOfEvent(e, 8, "service+route")));
    expect([...hot].some((p) => p < 4) && [...hot].some((p) => p >= 4)).toBe(true);
    expect(byRoute.subjects.size).toBeGreaterThan(byService.subjects.size);

    const a = billing(byService.panes);
    const b = billing(byRoute.panes);
    const ofKind = (m: Map<string, unknown>, pick: (id: string) => boolean) =>
      new Map([...m].filter(([id]) => pick(id)));
    const service = (id: string) => !id.includes("/") && !id.includes(`|${ALL_SERVICES}|`);
    // Service panes: in the route run they are the merge stage's, and only the merge stage's.
    const serviceIds = [...ofKind(a, service).keys()];
    expect(serviceIds.length).toBeGreaterThan(20);
    expect(ofKind(b, service)).toEqual(ofKind(a, service));
    expect(ofKind(b, (id) => id.includes("/"))).toEqual(ofKind(a, (id) => id.includes("/")));
    expect(ofKind(b, (id) => id.includes(`|${ALL_SERVICES}|`))).toEqual(
      ofKind(a, (id) => id.includes(`|${ALL_SERVICES}|`)),
    );
    // By service the workers publish the service panes; by route only the merge operator does (its
    // message ids start "-1|": its place in TM_PARTIALS, ADR 0029), the workers none.
    expect(byService.serviceMsgIds.length).toBeGreaterThan(0);
    expect(byService.serviceMsgIds.every((id) => !id.startsWith("-1|"))).toBe(true);
    expect(byRoute.serviceMsgIds.length).toBeGreaterThan(0);
    expect(byRoute.serviceMsgIds.filter((id) => !id.startsWith("-1|"))).toEqual([]);

    // Two merge partitions, merge-1 killed once: the same numbers again, the service panes from both merge operators
    // (message ids "-1|…" and "-2|…": −1 − merge partition), the `*` panes from merge partition 0.
    const split = await run("route-2", "service+route", 2);
    // The stepped feed ends the recording where `tidemark backfill` does.
    expect(split.endOfRecordingTs).toBe(byRoute.endOfRecordingTs);
    expect(billing(split.panes)).toEqual(b);
    const from = (prefix: string) => split.serviceMsgIds.filter((id) => id.startsWith(prefix)).length;
    expect(from("-1|")).toBeGreaterThan(0);
    expect(from("-2|")).toBeGreaterThan(0);
    expect(split.serviceMsgIds.length).toBe(from("-1|") + from("-2|"));
    // An aligned checkpoint completed across both stages and both merge operators.
    const full = split.completes.find((c) => "merge-1" in c.operators);
    expect(full, `a completed checkpoint names merge-1 (${JSON.stringify(split.completes)})`).toBeDefined();
    expect(Object.keys(full?.operators ?? {}).sort()).toEqual(["engine-0-3", "engine-4-7", "merge-0", "merge-1"]);
  }, 240_000);
});
