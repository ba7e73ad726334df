import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileClockNow, spawnTidemark, waitFor, type CliProcess } from "../index.js";
import { FAST_POLICIES_CONFIG } from "./fast-policies.js";

/** Running, and not a zombie waiting for a reaper (the orphans of a killed `up` are reparented). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

function checkpoints(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^checkpoint-\d+\.tmck$/.test(f)) : [];
}

describe("tidemark up killed with SIGKILL", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-killed-"));
  const data = join(dir, "data");
  const configFile = join(dir, "tidemark.config.json");
  // No periodic checkpoint within the test (log time never advances an hour): a checkpoint
  // written after the kill can only be the engine's final one, taken on its graceful stop.
  writeFileSync(
    configFile,
    JSON.stringify(
      { ...FAST_POLICIES_CONFIG, engine: { ...FAST_POLICIES_CONFIG.engine, checkpointEvery: "1h" } },
      null,
      2,
    ),
  );
  const args = [
    "up",
    "--no-demo",
    "--config",
    configFile,
    "--data",
    data,
    "--ingest-port",
    "0",
    "--dashboard-port",
    "0",
  ];
  const spawned: CliProcess[] = [];
  const leftover = new Set<number>();
  afterAll(() => {
    for (const p of spawned) if (p.child.exitCode === null) p.child.kill("SIGKILL");
    for (const pid of leftover) if (running(pid)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("every role stops itself (the engine with its final checkpoint), and the next up stops the nats-server left behind", async () => {
    const first = spawnTidemark(args, { cwd: dir, readyTimeoutMs: 60_000 });
    spawned.push(first);
    const ready = await first.ready;
    const pids = ready.pids as Record<string, number>;
    for (const pid of Object.values(pids)) leftover.add(pid);
    expect(Object.keys(pids).sort()).toEqual(["dashboard", "engine", "ingest", "merge", "nats-server"]);
    const recorded = JSON.parse(readFileSync(join(data, "up.pids"), "utf8")) as {
      processes: Array<{ name: string; pid: number }>;
    };
    expect(Object.fromEntries(recorded.processes.map((p) => [p.name, p.pid]))).toEqual(pids);

    // Some events, so the final checkpoint has offsets to keep.
    const token = String(ready.token);
    const ts = Date.now();
    const body = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        ts: ts - i * 100,
        service: "checkout",
        route: "POST /pay",
        status: 200,
        latency_ms: 12,
        user: `u${i}`,
      }),
    ).join("\n");
    const res = await fetch(`${String(ready.ingest)}/v1/events`, {
      method: "POST",
      body,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
    });
    expect(res.status).toBeLessThan(300);
    const cpDir = join(data, "checkpoints", String((ready.engine as { worker: string }).worker));
    const before = checkpoints(cpDir);

    const killedAt = Date.now();
    // On the files' own clock (harness/file-clock.ts): what is written after the kill is stamped no earlier.
    const killedOnFiles = fileClockNow();
    first.child.kill("SIGKILL");
    await first.exited;
    const roles = ["dashboard", "engine", "merge", "ingest"].map((r) => [r, pids[r] ?? -1] as const);
    await waitFor(() => roles.every(([, pid]) => !running(pid)), 15_000, "every role of the killed up to exit").catch(
      (err: Error) => {
        throw new Error(
          `${err.message}; still running: ${roles
            .filter(([, pid]) => running(pid))
            .map(([r]) => r)
            .join(", ")}`,
        );
      },
    );
    const stoppedMs = Date.now() - killedAt;
    const written = checkpoints(cpDir).filter((f) => !before.includes(f));
    expect(written).toHaveLength(1);
    expect(statSync(join(cpDir, written[0] ?? "")).mtimeMs).toBeGreaterThanOrEqual(killedOnFiles);

    // nats-server cannot watch its parent (it runs in its own process group and logs nothing at
    // its default level once idle): it is left running, and the next up on the same data dir
    // stops it by PID.
    const natsPid = pids["nats-server"] ?? -1;
    const natsLeft = running(natsPid);
    expect(natsLeft).toBe(true);
    const second = spawnTidemark(args, { cwd: dir, readyTimeoutMs: 60_000 });
    spawned.push(second);
    const again = await second.ready;
    for (const pid of Object.values(again.pids as Record<string, number>)) leftover.add(pid);
    expect(running(natsPid)).toBe(false);
    expect(second.output()).toMatch(
      new RegExp(`stopping nats-server \\(pid ${natsPid}\\) left running by an earlier up`),
    );
    // The engine resumes from the final checkpoint written after the kill.
    expect((again.engine as { restoredFrom: unknown }).restoredFrom).toEqual(
      expect.stringContaining(written[0] ?? "?"),
    );
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
    expect(existsSync(join(data, "up.pids"))).toBe(false);
    console.log(
      `up SIGKILLed: all roles stopped themselves in ${stoppedMs} ms, engine final checkpoint ${written[0]}; nats-server ${natsLeft ? "was left running and stopped by the next up" : "had already exited"}`,
    );
  }, 120_000);
});
