/**
 * CheckpointStore: checkpoint files of one worker in one directory (docs/operations.md,
 * "Checkpoints"). A write goes to a temp file, is fsynced, renamed into place and the directory
 * fsynced, so a crash leaves either the old set or the new one. The newest `keep` are kept. Loading
 * takes the newest file that decodes and verifies; corrupt newer ones are reported and skipped.
 */
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { decodeCheckpoint, encodeCheckpointParts, type Checkpoint } from "./checkpoint-codec.js";
import { RuntimeError } from "../errors.js";

const NAME = /^checkpoint-(\d{12})\.tmck$/;

export interface LoadedCheckpoint {
  checkpoint: Checkpoint | undefined;
  file: string | undefined;
  /** Newer files that could not be used, with the reason. */
  skipped: Array<{ file: string; reason: string }>;
  /** A restore from a cut other workers wrote (restore-set.ts): which, its files, where each partition resumes. */
  cut?: RestoredCut;
}

/** What a worker restored from when its partitions' state came from another layout's checkpoints. */
export interface RestoredCut {
  /** e.g. "aligned checkpoint 12", "the final checkpoints of a clean stop". */
  cut: string;
  /** Each file with the partitions taken from it. */
  files: Array<{ file: string; partitions: number[] }>;
  /** Partitions with no checkpoint anywhere: started fresh. */
  fresh: number[];
  /** Per owned partition: the last stream sequence its state covers (it resumes after it). */
  resumeAfter: Record<string, number>;
}

export interface WrittenCheckpoint {
  file: string;
  bytes: number;
}

export class CheckpointStore {
  private next = 0;

  constructor(
    readonly dir: string,
    private readonly keep = 3,
  ) {}

  /** Creates the directory, removes leftover temp files and finds the next file number. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const names = await readdir(this.dir);
    for (const n of names) if (n.endsWith(".tmp")) await rm(join(this.dir, n), { force: true });
    const numbers = this.numbered(names).map((x) => x.n);
    this.next = numbers.length === 0 ? 1 : Math.max(...numbers) + 1;
  }

  /**
   * The newest checkpoint when a graceful stop wrote it; else the file of the newest completed
   * aligned checkpoint when `preferred` names one of this store that verifies
   * (docs/decisions/0031-aligned-checkpoints.md); else the newest.
   */
  async load(preferred: string | undefined): Promise<LoadedCheckpoint> {
    const newest = await this.loadNewest();
    if (newest.checkpoint?.header.final) return newest;
    const name = preferred === undefined ? undefined : basename(preferred);
    if (name !== undefined && NAME.test(name) && (await readdir(this.dir)).includes(name)) {
      const file = join(this.dir, name);
      try {
        return { checkpoint: decodeCheckpoint(await readFile(file), name), file, skipped: newest.skipped };
      } catch (err) {
        return { ...newest, skipped: [{ file, reason: (err as Error).message }, ...newest.skipped] };
      }
    }
    return newest;
  }

  async loadNewest(): Promise<LoadedCheckpoint> {
    const skipped: LoadedCheckpoint["skipped"] = [];
    const files = this.numbered(await readdir(this.dir)).sort((a, b) => b.n - a.n);
    for (const { name } of files) {
      const file = join(this.dir, name);
      try {
        return { checkpoint: decodeCheckpoint(await readFile(file), name), file, skipped };
      } catch (err) {
        skipped.push({ file, reason: (err as Error).message });
      }
    }
    return { checkpoint: undefined, file: undefined, skipped };
  }

  /** Writes atomically and durably, then prunes to the newest `keep`. */
  async write(cp: Checkpoint): Promise<WrittenCheckpoint> {
    const parts = await encodeCheckpointParts(cp);
    const bytes = parts.reduce((n, p) => n + p.length, 0);
    const name = `checkpoint-${String(this.next++).padStart(12, "0")}.tmck`;
    const tmp = join(this.dir, `.${name}.tmp`);
    const file = join(this.dir, name);
    try {
      const fh = await open(tmp, "w");
      try {
        const { bytesWritten } = await fh.writev(parts);
        if (bytesWritten !== bytes) throw new Error(`wrote ${bytesWritten} of ${bytes} bytes`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
      const dh = await open(this.dir, "r");
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw new RuntimeError(
        "TM_CHECKPOINT_WRITE_FAILED",
        `could not write checkpoint ${file}: ${(err as Error).message}; check that the data directory is writable and has space`,
      );
    }
    await this.prune();
    return { file, bytes };
  }

  private async prune(): Promise<void> {
    const files = this.numbered(await readdir(this.dir)).sort((a, b) => b.n - a.n);
    for (const { name } of files.slice(this.keep)) await rm(join(this.dir, name), { force: true });
  }

  private numbered(names: readonly string[]): Array<{ name: string; n: number }> {
    const out: Array<{ name: string; n: number }> = [];
    for (const name of names) {
      const m = NAME.exec(name);
      if (m) out.push({ name, n: Number(m[1]) });
    }
    return out;
  }
}
