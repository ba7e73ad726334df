/**
 * Session windows through the real runtime (docs/decisions/0009-session-windows.md, "Live path"):
 * the engine started in-process with sessions on in its config (so `withSessions` is its
 * CoreFactory), a real nats-server, the recording backfilled by the real `tidemark backfill`. The
 * session panes read back from TM_PANES — per (policy, service, window) the sessions that ended
 * there — are for billing, which drops nothing here (100 s; the recording's delays stay under 60 s),
 * exactly the cells of an offline sessionizer over the recording; a run stopped midway and restarted
 * from its checkpoint gives the same pane stream after dedupe on (id, seq).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { DEFAULT_POLICIES } from "@tidemark/engine/core";
import type { Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { parseEngineConfig, startEngine, type RunningEngine } from "@tidemark/engine/runtime";
import { startTestNats, type TestNats } from "../index.js";
import { sessionCells } from "./sessionize.js";
import {
  connectNats,
  dedupePanes,
  makeRecording,
  normalized,
  readMessages,
  runBackfill,
  tempDir,
  waitForStatus,
  writeRecording,
  bodyLines,
} from "../engine/engine-fixtures.js";

const GAP = 20_000;
const CAP = 4 * 3_600_000;
const WINDOW = 10_000;
const SESSIONS = { gap: "20s" };
const events = makeRecording({ events: 3000, seed: 23 });

interface Row {
  id: string;
  /** Sessions ending in the window. */
  count: number;
  /** Of them, sessions with a failed event. */
  errors: number;
  /** Their events. */
  events: number;
}

/** Billing's cells by an offline sessionizer over the whole recording (it drops nothing here). */
function offline(list: readonly TelemetryEvent[]): Row[] {
  return [...sessionCells(list, GAP, WINDOW, CAP)]
    .map(([key, c]) => {
      const [service, start] = key.split("|") as [string, string];
      const id = `billing|sessions:${encodeURIComponent(service)}|${WINDOW}|${start}`;
      return { id, count: c.count, errors: c.errors, events: c.events };
    })
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** The latest session pane of each id of one policy (what an idempotent sink holds). */
function table(panes: Iterable<Pane>, policy: string): Row[] {
  const sorted = [...panes].filter((p) => p.policy === policy && p.sessions).sort((a, b) => a.seq - b.seq);
  const rows = new Map<string, Row>();
  for (const p of sorted)
    if (p.kind !== "retract")
      rows.set(p.id, {
        id: p.id,
        count: p.value.count,
        errors: p.value.errors,
        events: (p.sessions as NonNullable<Pane["sessions"]>).events,
      });
  return [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe("session windows in the live engine", () => {
  const servers: TestNats[] = [];
  const conns: NatsConnection[] = [];
  const engines: RunningEngine[] = [];
  afterAll(async () => {
    for (const e of engines) await e.close().catch(() => undefined);
    for (const c of conns) await c.close();
    for (const s of servers) await s.stop();
  });

  const dir = tempDir("sessions-live");
  const file = writeRecording(dir, events);
  const configFile = join(dir, "tidemark.config.json");
  writeFileSync(configFile, JSON.stringify({ windows: ["10s"] }));

  /** Panes stored per TM_PANES subject. */
  let subjects: Record<string, number> = {};
  let sessionPaneCount = 0;

  async function run(name: string, stopAt: number | null): Promise<Map<string, Pane>> {
    const nats = await startTestNats();
    servers.push(nats);
    const nc = await connectNats(nats.url);
    conns.push(nc);
    const flags = {
      nats: nats.url,
      data: join(dir, name),
      "metrics-port": "0",
      "checkpoint-every": "1s",
      "checkpoint-min-wall": "50ms",
    };
    // Sessions switched on through the engine's own config (the path `tidemark engine --sessions` takes).
    const config = parseEngineConfig({
      file: { windows: ["10s"], engine: { sessions: { enabled: true, ...SESSIONS } } },
      flags,
    });
    const start = async (): Promise<RunningEngine> => {
      const e = await startEngine(config);
      engines.push(e);
      return e;
    };
    let engine = await start();
    const summary = await runBackfill(nats.url, file, ["--config", configFile]);
    if (stopAt !== null) {
      await waitForStatus(nc, (s) => s.logTime !== null && s.logTime >= stopAt, 60_000, `log time ${stopAt}`);
      await engine.close();
      engine = await start();
      expect(engine.restoredFrom).toBeDefined();
    }
    await waitForStatus(
      nc,
      (s) => s.logTime !== null && s.logTime >= summary.endOfRecordingTs,
      60_000,
      "end of recording",
    );
    await engine.close();
    // Each TM_PANES message is a batch of one subject's panes (docs/decisions/0012-batched-transport.md):
    // count the panes on each subject.
    const messages = await readMessages(nc, "TM_PANES");
    const bodies = messages.flatMap((m) => bodyLines(m));
    subjects = {};
    for (const m of messages) subjects[m.subject] = (subjects[m.subject] ?? 0) + bodyLines(m).length;
    sessionPaneCount = bodies.filter((b) => (JSON.parse(b) as Pane).sessions !== undefined).length;
    return dedupePanes(bodies);
  }

  it("billing's session panes are the offline sessions' cells; a restart midway changes nothing", async () => {
    const clean = await run("clean", null);
    const sessionPanes = [...clean.values()].filter((p) => p.sessions);
    expect(sessionPanes.length).toBeGreaterThan(0);
    expect(sessionPanes.some((p) => p.kind === "retract" && p.policy === "alerting")).toBe(true);
    expect(DEFAULT_POLICIES.map((p) => p.name)).toContain("billing");
    expect(table(sessionPanes, "billing")).toEqual(offline(events));
    // Session panes are on tm.panes.<policy>.sessions, every one of them, and only they are.
    const onSessionSubjects = Object.entries(subjects).filter(([s]) => s.endsWith(".sessions"));
    expect(onSessionSubjects.map(([s]) => s).sort()).toEqual(
      DEFAULT_POLICIES.map((p) => `tm.panes.${p.name}.sessions`).sort(),
    );
    expect(onSessionSubjects.reduce((n, [, c]) => n + c, 0)).toBe(sessionPaneCount);
    expect(
      Object.keys(subjects)
        .filter((s) => !s.endsWith(".sessions"))
        .every((s) => s.endsWith(".10000")),
    ).toBe(true);

    const mid = (events[Math.floor(events.length / 2)] as TelemetryEvent).ingest_ts;
    const restarted = await run("restarted", mid);
    const norm = (m: Map<string, Pane>): string[] => [...m.values()].map(normalized).sort();
    expect(norm(restarted)).toEqual(norm(clean));
  });
});
