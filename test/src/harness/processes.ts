import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseReadyLine } from "@tidemark/deploy";

/** Path of the built `tidemark` CLI. */
export const TIDEMARK_BIN = fileURLToPath(import.meta.resolve("@tidemark/deploy/bin/tidemark.js"));

export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything printed so far on stdout and stderr. */
  output(): string;
  /** Resolves with the JSON of the `tidemark ready` line. */
  readonly ready: Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
}

/** Spawns `tidemark ...args` and watches for its ready line (rejects on early exit or timeout). */
export function spawnTidemark(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; readyTimeoutMs?: number } = {},
): CliProcess {
  const child = spawn(process.execPath, [TIDEMARK_BIN, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready line within ${opts.readyTimeoutMs ?? 30_000} ms:\n${out}`)),
      opts.readyTimeoutMs ?? 30_000,
    );
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tidemark ${args.join(" ")} exited with ${code} before ready:\n${out}`));
    });
    const onData = (b: Buffer): void => {
      out += b.toString("utf8");
      for (const line of out.split("\n")) {
        const info = parseReadyLine(line);
        if (info) {
          clearTimeout(timer);
          resolve(info);
        }
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (b: Buffer) => (out += b.toString("utf8")));
  });
  ready.catch(() => undefined);
  return { child, output: () => out, ready, exited };
}

/** True while a process with this PID exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Stops what a test started and may have left running after a failed assertion: SIGINT (a graceful
 * stop: `up` stops its children), then SIGKILL if it has not exited within `graceMs`.
 */
export async function stopLeftovers(procs: readonly CliProcess[], graceMs = 30_000): Promise<void> {
  const running = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  for (const p of running) p.child.kill("SIGINT");
  await Promise.all(
    running.map(async (p) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), graceMs)));
      if ((await Promise.race([p.exited, late])) === "late") p.child.kill("SIGKILL");
      clearTimeout(timer);
      await p.exited;
    }),
  );
}
