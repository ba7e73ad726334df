/**
 * The file system's clock now, read as a fresh file's mtime. The kernel stamps files from a coarse
 * clock (a tick of 1–10 ms: 4 ms on the CI machine) that can be behind `Date.now()` by up to a tick,
 * so "this file was written after t" is asserted against a marker stamped at t by the same clock,
 * never against `Date.now()` itself.
 */
import { rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let markers = 0;

/** Writes and removes a marker file in `dir` (on the file system of the files compared); returns its mtime, ms. */
export function fileClockNow(dir: string = tmpdir()): number {
  const marker = join(dir, `.file-clock-${process.pid}-${markers++}`);
  writeFileSync(marker, "");
  const ms = statSync(marker).mtimeMs;
  rmSync(marker);
  return ms;
}
