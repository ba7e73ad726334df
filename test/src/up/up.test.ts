import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { decodeCheckpoint } from "@tidemark/engine/runtime";
import { isAlive, spawnTidemark, stopLeftovers, waitFor, type CliProcess } from "../index.js";
import { FAST_POLICIES_CONFIG } from "./fast-policies.js";

const POLICIES = ["dashboard", "alerting", "billing"] as const;

async function panes(dashboard: string, policy: string, service?: string): Promise<Pane[]> {
  const only = service === undefined ? "" : `&service=${encodeURIComponent(service)}`;
  const res = await fetch(`${dashboard}/api/panes?policy=${policy}&window=10s${only}`);
  if (!res.ok) return [];
  return ((await res.json()) as { panes: Pane[] }).panes;
}

async function stop(up: CliProcess, pids: number[]): Promise<void> {
  up.child.kill("SIGINT");
  expect(await up.exited).toBe(0);
  for (const pid of pids) await waitFor(() => !isAlive(pid), 15_000, `child pid ${pid} to exit`);
}

describe("tidemark up: the whole stack with demo traffic", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-all-"));
  const data = join(dir, "data");
  const configFile = join(dir, "tidemark.config.json");
  writeFileSync(configFile, JSON.stringify(FAST_POLICIES_CONFIG, null, 2));
  // Two workers (this machine's default is one) and the merge operator: the two-stage dataflow as `up` runs it.
  const args = [
    "up",
    "--config",
    configFile,
    "--data",
    data,
    "--ingest-port",
    "0",
    "--dashboard-port",
    "0",
    "--workers",
    "2",
  ];
  // A failed assertion must not leave an `up` (and its nats-server and roles) running for the next file.
  const started: CliProcess[] = [];
  afterAll(async () => {
    await stopLeftovers(started);
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves panes of all three policies from live demo traffic, stops every child on SIGINT, and a second up resumes", async () => {
    const t0 = Date.now();
    const first = spawnTidemark(args, { cwd: dir, readyTimeoutMs: 60_000 });
    started.push(first);
    const ready = await first.ready;
    const dashboard = String(ready.dashboard);
    const token = String(ready.token);
    const pids = Object.values(ready.pids as Record<string, number>);
    expect(Object.keys(ready.pids as object).sort()).toEqual([
      "dashboard",
      "demo",
      "engine",
      "engine-2",
      "ingest",
      "merge",
      "nats-server",
    ]);
    const engines = ready.engines as { worker: string; partitions: number[] }[];
    expect(engines.map((e) => e.partitions)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect((ready.merge as { worker: string }).worker).toBe("merge-0");
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    expect(readFileSync(join(data, "ingest-token"), "utf8").trim()).toBe(token);

    // Ingest holds writes behind the generated token.
    const denied = await fetch(`${String(ready.ingest)}/v1/events`, {
      method: "POST",
      body: '{"service":"x"}\n',
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(denied.status).toBe(401);

    const seen = new Map<string, Pane[]>();
    await waitFor(
      async () => {
        for (const p of POLICIES) seen.set(p, await panes(dashboard, p));
        return POLICIES.every((p) => (seen.get(p) ?? []).some((x) => x.value.count > 0));
      },
      60_000,
      "panes of dashboard, alerting and billing on /api/panes",
      1000,
    );
    const firstPanesAfterMs = Date.now() - t0;
    // Billing is final-only: every pane it shows is a final one; the demo's services appear.
    expect((seen.get("billing") ?? []).every((p) => p.kind === "final")).toBe(true);
    const services = new Set(POLICIES.flatMap((p) => (seen.get(p) ?? []).map((x) => x.key.service)));
    expect(services.has("api-gateway") && services.has("checkout")).toBe(true);
    console.log(`up: panes of all three policies ${firstPanesAfterMs} ms after start`);

    // The merge operator's all-services panes, for every policy; a billing final counts at least
    // every request the services' finals of its window count (the merge judges a tick's records at
    // its start, ADR 0029) and, users being a union, no more users than their sum.
    const star = new Map<string, Pane[]>();
    await waitFor(
      async () => {
        for (const p of POLICIES) star.set(p, await panes(dashboard, p, "*"));
        const finals = (star.get("billing") ?? []).filter((x) => x.kind === "final" && x.value.count > 0);
        return POLICIES.every((p) => (star.get(p) ?? []).some((x) => x.value.count > 0)) && finals.length > 0;
      },
      60_000,
      "all-services panes of every policy on /api/panes?service=*",
      1000,
    );
    const billing = await panes(dashboard, "billing");
    const compared = (star.get("billing") ?? [])
      .filter((x) => x.kind === "final" && x.value.count > 0)
      .map((all) => {
        const same = billing.filter(
          (x) => x.key.service !== "*" && x.key.route === undefined && x.window.start === all.window.start,
        );
        return {
          all,
          count: same.reduce((n, x) => n + x.value.count, 0),
          users: same.reduce((n, x) => n + x.value.users, 0),
        };
      })
      .filter((c) => c.count > 0);
    expect(compared.length).toBeGreaterThan(0);
    for (const c of compared) {
      expect(c.all.value.count).toBeGreaterThanOrEqual(c.count);
      expect(c.all.value.users).toBeLessThanOrEqual(c.users);
    }

    // `up` runs session windows by default: the demo's users' sessions reach the Sessions panel.
    await waitFor(
      async () => {
        const res = await fetch(`${dashboard}/api/sessions?policy=billing&window=10s`);
        const body = (await res.json()) as { panes: Pane[] };
        return body.panes.some((p) => p.value.count > 0);
      },
      60_000,
      "billing's session metrics on /api/sessions",
      1000,
    );

    const lastWindowBefore = Math.max(...(seen.get("billing") ?? []).map((p) => p.window.start));
    const worker = String((ready.engine as { worker: string }).worker);
    await stop(first, pids);
    // The engine's final checkpoint (taken on its graceful stop) is the newest file of its directory.
    const cpDir = join(data, "checkpoints", worker);
    const newest = readdirSync(cpDir)
      .filter((f) => /^checkpoint-\d+\.tmck$/.test(f))
      .sort((a, b) => Number(/\d+/.exec(b)?.[0]) - Number(/\d+/.exec(a)?.[0]))[0];
    expect(newest).toBeDefined();
    expect(first.output()).toContain("stopping engine");
    expect(first.output().indexOf("stopping ingest")).toBeLessThan(first.output().indexOf("stopping engine"));

    // A second up on the same data dir: same token, engine resumes from its checkpoint, the
    // dashboard replays what came before and new windows follow.
    const second = spawnTidemark(args, { cwd: dir, readyTimeoutMs: 60_000 });
    started.push(second);
    const again = await second.ready;
    expect(again.token).toBe(token);
    // The engine restored that checkpoint: its path, an existing file whose header is this worker's
    // with offsets past the demo traffic already consumed.
    const restoredFrom = (again.engine as { restoredFrom: unknown }).restoredFrom;
    expect(typeof restoredFrom).toBe("string");
    expect(restoredFrom).toBe(join(cpDir, newest as string));
    expect(existsSync(restoredFrom as string)).toBe(true);
    const header = decodeCheckpoint(readFileSync(restoredFrom as string), String(restoredFrom)).header;
    expect(header.worker).toBe(worker);
    expect(header.offsets).toHaveLength(header.partitions.length);
    expect(header.offsets.some((o) => o.lastSeq > 0)).toBe(true);
    expect(header.logTime).toBeGreaterThan(t0);
    // So did the merge operator, from its own checkpoint directory.
    const mergeFrom = (again.merge as { restoredFrom: unknown }).restoredFrom;
    expect(mergeFrom).toMatch(new RegExp(`checkpoints/merge-0/checkpoint-\\d+\\.tmck$`));
    const dashboard2 = String(again.dashboard);
    await waitFor(
      async () => (await panes(dashboard2, "billing")).some((p) => p.window.start > lastWindowBefore),
      45_000,
      "new billing windows after the restart",
      1000,
    );
    const after = await panes(dashboard2, "billing");
    expect(after.some((p) => p.window.start <= lastWindowBefore)).toBe(true);
    await stop(second, Object.values(again.pids as Record<string, number>));
  });

  it("restarts with another --workers: a clean stop's checkpoints gathered, a crash's cut restored by every role from a savepoint", async () => {
    const withWorkers = (n: number): string[] => [...args.slice(0, -1), String(n)];
    // 2 → 1 after the clean stop above: the worker gathers both final checkpoints and says so.
    const finals = ["engine-0-3", "engine-4-7"].map((w) => newestCheckpoint(join(data, "checkpoints", w)));
    const one = spawnTidemark(withWorkers(1), { cwd: dir, readyTimeoutMs: 60_000 });
    started.push(one);
    const ready = await one.ready;
    expect(one.output()).toContain(
      "the data directory was written by 2 workers (engine-0-3, engine-4-7); restoring 1 worker from the final checkpoints of a clean stop",
    );
    const cut = (ready.engine as { restoredCut: { cut: string; resumeAfter: Record<string, number> } }).restoredCut;
    expect(cut.cut).toBe("the final checkpoints of a clean stop");
    for (const file of finals) {
      const h = decodeCheckpoint(readFileSync(file), file).header;
      h.partitions.forEach((p, i) => expect(cut.resumeAfter[String(p)], `partition ${p}`).toBe(h.offsets[i]?.lastSeq));
    }
    const dashboard = String(ready.dashboard);
    const before = Math.max(0, ...(await panes(dashboard, "billing")).map((p) => p.window.start));
    await waitFor(
      async () => (await panes(dashboard, "billing")).some((p) => p.window.start > before),
      45_000,
      "new billing windows from the gathering worker",
      1000,
    );
    // A crash: the worker and the merge operator killed; up stops the rest and exits 1.
    const pids = ready.pids as Record<string, number>;
    for (const role of ["engine", "merge"]) process.kill(pids[role] as number, "SIGKILL");
    expect(await one.exited).toBe(1);
    for (const pid of Object.values(pids)) await waitFor(() => !isAlive(pid), 15_000, `child pid ${pid} to exit`);
    // 1 → 2 from the crash's newest aligned checkpoint: saved as a savepoint, every role restored from it.
    const two = spawnTidemark(withWorkers(2), { cwd: dir, readyTimeoutMs: 60_000 });
    started.push(two);
    const again = await two.ready;
    expect(two.output()).toMatch(
      /the data directory was written by 1 worker \(engine-0-7\), and its newest consistent cut is aligned checkpoint \d+: saved as savepoint \S+savepoints\/rescale-epoch1-\d+; restoring every role from it with 2 workers/,
    );
    const engines = again.engines as Array<{ epoch: number; restoredCut: { cut: string } | null }>;
    for (const e of engines) {
      expect(e.epoch).toBe(1);
      expect(e.restoredCut?.cut).toMatch(/^savepoint \S+ \(aligned checkpoint \d+\)$/);
    }
    expect((again.merge as { epoch: number }).epoch).toBe(1);
    const dashboard2 = String(again.dashboard);
    const last = Math.max(0, ...(await panes(dashboard2, "billing")).map((p) => p.window.start));
    await waitFor(
      async () => (await panes(dashboard2, "billing")).some((p) => p.window.start > last),
      45_000,
      "new billing windows after restoring every role from the savepoint",
      1000,
    );
    await stop(two, Object.values(again.pids as Record<string, number>));
  }, 240_000);
});

/** The newest checkpoint file of an operator's directory. */
function newestCheckpoint(dir: string): string {
  const names = readdirSync(dir).filter((f) => /^checkpoint-\d+\.tmck$/.test(f));
  return join(dir, names.sort().at(-1) as string);
}
