/**
 * A progress bar on stderr, shown only when stderr is a terminal and the input is large
 * (≥ 200 000 events), or when forced with --progress: tests and pipes get clean output.
 */
export const PROGRESS_MIN_EVENTS = 200_000;

export interface ProgressBar {
  update(done: number): void;
  end(): void;
}

export function progressBar(label: string, total: number, forced: boolean): ProgressBar {
  const on = forced || (process.stderr.isTTY === true && total >= PROGRESS_MIN_EVENTS);
  let lastPct = -1;
  const draw = (done: number): void => {
    const pct = total === 0 ? 100 : Math.floor((100 * done) / total);
    if (pct === lastPct) return;
    lastPct = pct;
    const filled = Math.round(pct / 2.5);
    process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(40 - filled)}] ${pct}% ${done}/${total}`);
  };
  return {
    update: (done) => on && draw(done),
    end: () => {
      if (!on) return;
      draw(total);
      process.stderr.write("\n");
    },
  };
}
