import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stopLeftovers, writeUpPids } from "./up-pids.js";

const children: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sleeper(seconds: string): { pid: number; exited: Promise<string | null> } {
  const child = spawn("sleep", [seconds], { stdio: "ignore" });
  children.push(child.pid ?? -1);
  return { pid: child.pid ?? -1, exited: new Promise((r) => child.once("exit", (_code, signal) => r(signal))) };
}

describe("up.pids: leftovers of a killed up", () => {
  it("stops a recorded process still running as recorded, leaves one whose command line differs, and removes the file", async () => {
    const data = mkdtempSync(join(tmpdir(), "tidemark-up-pids-"));
    dirs.push(data);
    const ours = sleeper("31");
    const other = sleeper("32");
    writeUpPids(data, [
      { name: "nats-server", pid: ours.pid, markers: ["sleep", "31"], stopsItself: false },
      // Same PID would be reused by something else: its command line does not match.
      { name: "nats-server", pid: other.pid, markers: ["sleep", "/some/store"], stopsItself: false },
    ]);
    const lines: string[] = [];
    await stopLeftovers(data, (l) => lines.push(l), 2000);
    expect(await ours.exited).toBe("SIGTERM");
    expect(lines).toEqual([`stopping nats-server (pid ${ours.pid}) left running by an earlier up`]);
    process.kill(other.pid, 0); // still running: throws if not
    expect(existsSync(join(data, "up.pids"))).toBe(false);
  });

  it("waits for a role to stop by itself, then SIGKILLs it once its grace is over (never SIGTERM: it may be checkpointing)", async () => {
    const data = mkdtempSync(join(tmpdir(), "tidemark-up-pids-"));
    dirs.push(data);
    const role = sleeper("33");
    writeUpPids(data, [{ name: "engine", pid: role.pid, markers: ["sleep", "33"], stopsItself: true }]);
    const t0 = Date.now();
    await stopLeftovers(data, () => undefined, 2000, 600);
    expect(await role.exited).toBe("SIGKILL");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
  });
});
