/**
 * `<data>/up.pids`: the processes a `tidemark up` started, so the next `up` on the same data dir
 * can stop those its predecessor left behind when it was SIGKILLed (ADR 0008, "When up itself is
 * killed"). The roles stop themselves once `up` is gone; nats-server cannot watch its parent, so
 * it is the one this file exists for. A PID is signalled only after /proc shows it still runs the
 * recorded program with the recorded marker (nats-server: its store dir), so a reused PID is
 * never touched.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface StartedProcess {
  name: string;
  pid: number;
  /** Strings that must all appear in the process's command line for it to be ours. */
  markers: string[];
  /** A role stops itself once its `up` is gone: waited for, not signalled (it may be checkpointing). */
  stopsItself: boolean;
}

const FILE = "up.pids";

export function writeUpPids(dataDir: string, processes: readonly StartedProcess[]): void {
  writeFileSync(join(dataDir, FILE), JSON.stringify({ up: process.pid, processes }, null, 2) + "\n");
}

export function removeUpPids(dataDir: string): void {
  rmSync(join(dataDir, FILE), { force: true });
}

/**
 * Waits up to `roleGraceMs` for recorded roles still running to finish stopping themselves (then
 * SIGKILL), then stops the recorded nats-server (SIGTERM, SIGKILL after `graceMs`): the roles'
 * final acks need it. Only processes still running as recorded are touched.
 */
export async function stopLeftovers(
  dataDir: string,
  log: (line: string) => void,
  graceMs = 5000,
  roleGraceMs = 20_000,
): Promise<void> {
  const file = join(dataDir, FILE);
  if (!existsSync(file)) return;
  let recorded: StartedProcess[] = [];
  try {
    recorded = (JSON.parse(readFileSync(file, "utf8")) as { processes?: StartedProcess[] }).processes ?? [];
  } catch {
    log(`ignoring unreadable ${file}`);
  }
  const left = recorded.filter(runsAs);
  for (const p of [...left.filter((l) => l.stopsItself), ...left.filter((l) => !l.stopsItself)]) {
    log(`${p.stopsItself ? "waiting for" : "stopping"} ${p.name} (pid ${p.pid}) left running by an earlier up`);
    await stopPid(p.pid, p.stopsItself ? roleGraceMs : graceMs, !p.stopsItself);
  }
  rmSync(file, { force: true });
}

function runsAs(p: StartedProcess): boolean {
  try {
    const cmdline = readFileSync(`/proc/${p.pid}/cmdline`, "utf8").split("\0");
    return p.markers.every((m) => cmdline.some((arg) => arg.includes(m)));
  } catch {
    return false;
  }
}

/** Running and not a zombie (an orphan's reaper may be slow to collect it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function stopPid(pid: number, graceMs: number, term: boolean): Promise<void> {
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(pid, s);
    } catch {
      // already gone
    }
  };
  if (term) signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) signal("SIGKILL");
  while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
}
