/**
 * The newest-sample snapshot on disk (docs/remote-write.md, "Crash and resend"): written after each
 * accepted request and before the panes are acknowledged; a temp file, fsynced, renamed.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { SeriesNewest } from "./series-newest.js";

export class NewestFile {
  readonly path: string;

  constructor(dataDir: string, consumer: string) {
    this.path = join(dataDir, "remote-write", `${consumer}.json`);
  }

  /** The snapshot, or an empty one when there is none; a corrupt file throws naming it. */
  load(maxSeries: number): SeriesNewest {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return new SeriesNewest(maxSeries);
    }
    try {
      return SeriesNewest.from(JSON.parse(text), maxSeries);
    } catch (err) {
      throw new Error(
        `${this.path} is not a remote-write snapshot (${(err as Error).message}): remove it to start afresh (a resend may then be refused as out of order)`,
      );
    }
  }

  save(newest: SeriesNewest): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, JSON.stringify(newest));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }
}
