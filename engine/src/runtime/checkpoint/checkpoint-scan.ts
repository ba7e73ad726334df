/**
 * Every checkpoint under a root of operator directories — a data directory's `checkpoints/` or a
 * savepoint (docs/decisions/0057-elastic-workers.md) — with its header read from the file's first
 * bytes, not verified (the restore step verifies the files it chooses). A file whose header cannot
 * be read is reported and left out.
 */
import { open, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { decodeCheckpointHeader } from "./checkpoint-codec.js";
import type { FoundCheckpoint } from "./restore-set.js";

const NAME = /^checkpoint-\d{12}\.tmck$/;

export interface Scan {
  found: FoundCheckpoint[];
  unreadable: Array<{ file: string; reason: string }>;
}

export async function scanCheckpoints(root: string): Promise<Scan> {
  const scan: Scan = { found: [], unreadable: [] };
  let operators: string[];
  try {
    operators = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return scan;
  }
  for (const operator of operators.sort()) {
    const dir = join(root, operator);
    for (const name of (await readdir(dir)).filter((n) => NAME.test(n)).sort()) {
      const file = join(dir, name);
      try {
        scan.found.push({ operator, file, header: await readHeader(file, name) });
      } catch (err) {
        scan.unreadable.push({ file, reason: (err as Error).message });
      }
    }
  }
  return scan;
}

/** A checkpoint file's header from its first bytes, not verified; throws TM_CHECKPOINT_CORRUPT when it cannot be read. */
export async function readHeader(file: string, name: string = basename(file)): Promise<FoundCheckpoint["header"]> {
  const fh = await open(file, "r");
  try {
    let want = 4096;
    for (;;) {
      const buf = Buffer.alloc(want);
      const { bytesRead } = await fh.read(buf, 0, want, 0);
      const r = decodeCheckpointHeader(buf.subarray(0, Math.max(bytesRead, 0)), name);
      if ("header" in r) return r.header;
      if (r.need <= want || bytesRead < want)
        throw new Error(`checkpoint ${name} is unusable: header runs past the end`);
      want = r.need;
    }
  } finally {
    await fh.close();
  }
}
