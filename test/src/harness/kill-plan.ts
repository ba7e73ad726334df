/**
 * Seeded kill points for the crash tests (docs/operations.md, "Recovery"): each kill waits until
 * its victim's log time passes a point drawn from a seeded generator inside the recording, so a
 * kill lands mid-run on a condition, never after a wall-clock delay, and a failing run is replayed
 * with the seed it logged (TM_KILL_SEED overrides the test's default).
 */

/** The seed to use: TM_KILL_SEED when set (a logged seed, to replay a run), else `fallback`. */
export function killSeed(fallback: number): number {
  const raw = process.env.TM_KILL_SEED;
  if (raw === undefined || raw === "") return fallback;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed) || seed <= 0)
    throw new Error(`TM_KILL_SEED must be a positive integer (a seed a crash test logged), got "${raw}"`);
  return seed;
}

/**
 * `n` ascending log times in [from + 10 %, from + 80 %) of [from, to): each in its own equal slice,
 * at a seeded position in it, so the kills are spread over the run and all before its end.
 */
export function killPoints(seed: number, n: number, from: number, to: number): number[] {
  let s = seed >>> 0 || 1;
  const rnd = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const lo = from + 0.1 * (to - from);
  const slice = (0.7 * (to - from)) / n;
  return Array.from({ length: n }, (_, i) => Math.floor(lo + slice * (i + rnd())));
}

/** Logs the plan in one line (the seed replays it). */
export function logKillPlan(test: string, seed: number, points: readonly number[], from: number): void {
  const offsets = points.map((p) => `+${p - from} ms`).join(", ");
  console.log(`${test}: kill seed ${seed} (TM_KILL_SEED replays it); kills at log time ${offsets}`);
}
