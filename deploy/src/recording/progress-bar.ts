/**
 * A progress bar on stderr for large inputs: shown when stderr is a terminal and the recording is
 * large (≥ 200 000 events, or ≥ 32 MiB while reading), or when forced with --progress. Pipes and
 * tests get clean output.
 */
export const PROGRESS_MIN_EVENTS = 200_000;
export const PROGRESS_MIN_BYTES = 32 * 1024 * 1024;

export interface ProgressBar {
  update(done: number): void;
  end(): void;
}

/** Whether to draw: forced, or a terminal and a large input. */
export function showProgress(forced: boolean, large: boolean): boolean {
  return forced || (process.stderr.isTTY === true && large);
}

export function progressBar(label: string, total: number, show: boolean): ProgressBar {
  let lastPct = -1;
  const draw = (done: number): void => {
    const pct = total === 0 ? 100 : Math.min(100, Math.floor((100 * done) / total));
    if (pct === lastPct) return;
    lastPct = pct;
    const filled = Math.round(pct / 2.5);
    process.stderr.write(`\r${label} [${"#".repeat(filled)}${".".repeat(40 - filled)}] ${pct}% ${done}/${total}`);
  };
  return {
    update: (done) => show && draw(done),
    end: () => {
      if (!show) return;
      draw(total);
      process.stderr.write("\n");
    },
  };
}
