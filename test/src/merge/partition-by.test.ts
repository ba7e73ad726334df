/**
 * `partitionBy: "service+route"` (docs/decisions/0032-partition-by-route.md) against a real
 * nats-server: one hot service's events spread over partitions of both workers; its service-level
 * panes then come from the merge stage, and they hold the same numbers as with `partitionBy:
 * "service"`, where one worker makes them alone; route panes and the all-services panes too.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ALL_SERVICES, paneBatchLines, partitionOfEvent, type Pane } from "@tidemark/engine/protocol";
import {
  lastPanes,
  makeRecording,
  readMessages,
  runBackfill,
  stopGracefully,
  tempDir,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { allPanes, endStack, startStack, waitForMergeEnd, type Stack } from "./merge-fixtures.js";

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
  }

  async function run(name: string, by: string): Promise<Run> {
    const flags = ["--partition-by", by, "--idle-timeout", "120s"];
    const s = await startStack(join(dir, name), SPLIT, flags, ["--partition-by", by]);
    stacks.push(s);
    const end = (await runBackfill(s.nats.url, file, ["--partition-by", by])).endOfRecordingTs;
    await waitForMergeEnd(s.nc, end);
    await Promise.all([...s.workers, s.merge].map((p) => stopGracefully(p)));
    const subjects = new Set(
      (await readMessages(s.nc, "TM_EVENTS")).filter((m) => m.data.length > 0).map((m) => m.subject),
    );
    const serviceMsgIds = (await readMessages(s.nc, "TM_PANES"))
      .filter((m) =>
        paneBatchLines(m.body).some((l) => {
          const p = JSON.parse(l) as Pane;
          return p.key.route === undefined && p.key.service !== ALL_SERVICES;
        }),
      )
      .map((m) => m.msgId ?? "");
    return { panes: await allPanes(s.nc), subjects, serviceMsgIds };
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
  }, 180_000);
});
