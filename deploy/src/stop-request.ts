/**
 * When a role should stop: SIGINT, SIGTERM, or — for a role started by `tidemark up` — its
 * parent `up` gone (SIGKILLed, crashed). `spawnRole` puts `up`'s PID in TIDEMARK_PARENT_PID; the
 * role polls its own parent PID, which the kernel changes to a reaper once `up` is dead. Every
 * path ends in the role's one graceful shutdown (the engine writes its final checkpoint).
 */
export const PARENT_PID_ENV = "TIDEMARK_PARENT_PID";

const POLL_MS = 500;

/** Resolves with the reason ("SIGINT", "SIGTERM", "parent gone") the first time one happens. */
export function stopRequested(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const parent = Number(env[PARENT_PID_ENV]);
  const watched = Number.isInteger(parent) && parent > 0;
  return new Promise((resolve) => {
    const done = (why: string): void => {
      clearInterval(timer);
      process.off("SIGINT", onInt).off("SIGTERM", onTerm);
      resolve(why);
    };
    const onInt = (): void => done("SIGINT");
    const onTerm = (): void => done("SIGTERM");
    const check = (): void => {
      if (process.ppid === parent) return;
      // Its pipes to `up` are broken now: a write to them must not crash the shutdown.
      for (const s of [process.stdout, process.stderr]) s.on("error", () => undefined);
      process.stderr.write(`tidemark: parent process ${parent} is gone; stopping\n`);
      done("parent gone");
    };
    process.once("SIGINT", onInt).once("SIGTERM", onTerm);
    const timer = watched ? setInterval(check, POLL_MS).unref() : undefined;
    if (watched) check();
  });
}
