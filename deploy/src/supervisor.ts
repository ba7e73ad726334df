import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseReadyLine } from "./ready-line.js";
import { DeployError } from "./errors.js";
import { PARENT_PID_ENV } from "./stop-request.js";

/** Something `tidemark up` started and must stop, in reverse start order. */
export interface Stoppable {
  readonly name: string;
  readonly pid: number;
  /** Strings in its command line that identify it (up.pids; up-pids.ts). */
  readonly markers: string[];
  stop(): Promise<void>;
  readonly exited: Promise<number | null>;
}

const CLI = fileURLToPath(new URL("./cli.js", import.meta.url));

/**
 * Starts `tidemark <role> ...args` as a child process, forwards its output with a `[role]`
 * prefix, and resolves with the JSON of its ready line.
 */
export function spawnRole(
  role: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  readyTimeoutMs = 30_000,
  /** What `up` calls it (logs, up.pids, the ready line's pids): the role, unless several run. */
  name = role,
): Promise<{ child: Stoppable; ready: Record<string, unknown> }> {
  // Own process group: a terminal's Ctrl-C reaches `up` alone, which then stops the roles in order.
  // The role stops itself too if `up` disappears without doing so (stop-request.ts).
  const childEnv = { ...env, [PARENT_PID_ENV]: String(process.pid) };
  const proc = spawn(process.execPath, [CLI, role, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: childEnv,
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const child: Stoppable = {
    name,
    pid: proc.pid ?? -1,
    markers: [CLI, role],
    exited,
    stop: () => stopProcess(proc, exited),
  };
  proc.stderr?.on("data", (b: Buffer) => process.stderr.write(prefixLines(name, b.toString("utf8"))));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new DeployError("TM_ROLE_START_FAILED", `${name} printed no ready line within ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new DeployError("TM_ROLE_START_FAILED", `${name} exited with code ${code} before it was ready`));
    });
    let buffered = "";
    proc.stdout?.on("data", (b: Buffer) => {
      buffered += b.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const ready = parseReadyLine(line);
        if (ready) {
          clearTimeout(timer);
          resolve({ child, ready });
        } else process.stdout.write(prefixLines(name, line + "\n"));
      }
    });
  });
}

function prefixLines(role: string, text: string): string {
  return text.replace(/^(?=.)/gm, `[${role}] `);
}

async function stopProcess(proc: ChildProcess, exited: Promise<number | null>, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Stops everything in reverse order of start; never throws. */
export async function stopAll(started: readonly Stoppable[], log: (line: string) => void): Promise<void> {
  for (const s of [...started].reverse()) {
    log(`stopping ${s.name} (pid ${s.pid})`);
    try {
      await s.stop();
    } catch (err) {
      log(`could not stop ${s.name}: ${(err as Error).message}`);
    }
  }
}
