/**
 * docs/operations.md, "`tidemark up`", and ADR 0008, "Own process groups, ordered stop": if any
 * child exits on its own, `up` stops the rest and exits 1; it stops demo, ingest, merge operator,
 * engine, dashboard and nats-server in that order, one after the other. A real `up` with every role and the demo; the
 * engine is SIGKILLed by its PID; the test timestamps up's log lines and polls each child's
 * /proc entry to know when it is gone.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "@tidemark/deploy";
import { spawnTidemark, waitFor, type CliProcess } from "../index.js";

const ORDER = ["demo", "ingest", "merge", "engine", "dashboard", "nats-server"] as const;

/** Running, and not a zombie waiting for its parent to reap it. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

describe("tidemark up when a child dies", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-stop-"));
  const data = join(dir, "data");
  let up: CliProcess | undefined;
  let pids: Record<string, number> = {};
  afterAll(() => {
    if (up && up.child.exitCode === null) up.child.kill("SIGKILL");
    for (const pid of Object.values(pids)) if (running(pid)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops the rest in the documented order, one after the other, and exits 1", async () => {
    const configFile = join(dir, "tidemark.config.json");
    const config = {
      nats: { port: await freePort(), monitorPort: await freePort() },
      engine: { metricsPort: 0 },
      demo: { rate: 50 },
    };
    writeFileSync(configFile, JSON.stringify(config));
    up = spawnTidemark(["up", "--config", configFile, "--data", data, "--ingest-port", "0", "--dashboard-port", "0"], {
      cwd: dir,
      readyTimeoutMs: 60_000,
    });
    const lines: Array<{ at: number; line: string }> = [];
    let partial = "";
    up.child.stdout?.on("data", (b: Buffer) => {
      const at = Date.now();
      const parts = (partial + b.toString("utf8")).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) lines.push({ at, line });
    });
    const ready = await up.ready;
    pids = ready.pids as Record<string, number>;
    expect(Object.keys(pids).sort()).toEqual([...ORDER].sort());

    // When each child was last seen running and first seen gone, polled every 10 ms.
    const lastAlive = new Map<string, number>();
    const goneAt = new Map<string, number>();
    const look = (): void => {
      const now = Date.now();
      for (const [name, pid] of Object.entries(pids))
        if (goneAt.has(name)) continue;
        else if (running(pid)) lastAlive.set(name, now);
        else goneAt.set(name, now);
    };
    // Seen once just before the kill too: a child up stops within the first 10 ms was still seen running.
    look();
    const watch = setInterval(look, 10);
    const killedAt = Date.now();
    process.kill(pids.engine as number, "SIGKILL");
    const code = await up.exited;
    await waitFor(() => goneAt.size === ORDER.length, 15_000, "every child gone");
    clearInterval(watch);

    expect(code).toBe(1);
    const text = lines.map((l) => l.line).join("\n");
    expect(text).toContain("tidemark up: engine exited (code null): stopping");
    expect(text).toContain("tidemark up: stopped; data left in place");
    // "stopping <name> (pid N)" for each child, in the documented order (the dead engine included).
    const stopping = lines
      .map((l) => ({ ...l, m: /^tidemark up: stopping (\S+) \(pid (\d+)\)$/.exec(l.line) }))
      .filter((l) => l.m !== null);
    expect(stopping.map((l) => [l.m?.[1], Number(l.m?.[2])])).toEqual(ORDER.map((n) => [n, pids[n]]));
    // One after the other: each live child is gone before up turns to the next one.
    const saidAt = new Map(stopping.map((l) => [l.m?.[1] as string, l.at]));
    const ctx = JSON.stringify({
      alive: Object.fromEntries([...lastAlive].map(([n, t]) => [n, t - killedAt])),
      gone: Object.fromEntries([...goneAt].map(([n, t]) => [n, t - killedAt])),
      said: Object.fromEntries([...saidAt].map(([n, t]) => [n, t - killedAt])),
    });
    const live = ORDER.filter((n) => n !== "engine");
    for (let i = 0; i + 1 < live.length; i++) {
      const [a, b] = [live[i] as string, live[i + 1] as string];
      expect(saidAt.get(b) as number, `"stopping ${b}" after ${a} was gone: ${ctx}`).toBeGreaterThanOrEqual(
        lastAlive.get(a) as number,
      );
      expect(goneAt.get(b) as number, `${b} gone after ${a}: ${ctx}`).toBeGreaterThanOrEqual(goneAt.get(a) as number);
    }
    expect(existsSync(join(data, "up.pids"))).toBe(false);
    console.log(`up after its engine died: ${ctx}`);
  }, 120_000);
});
