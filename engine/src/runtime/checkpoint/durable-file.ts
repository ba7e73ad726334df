/**
 * Small files written durably (docs/decisions/0057-elastic-workers.md: a savepoint's manifest, a
 * data directory's restore epoch): a temp file, fsynced, renamed into place, the directory fsynced —
 * a crash leaves the old file or the new one, never a torn one.
 */
import { mkdir, open, rename, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeJsonDurably(path: string, value: unknown): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.tmp`);
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(`${JSON.stringify(value, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await fsync(dir);
}

/** fsync of a file or a directory. */
export async function fsync(path: string): Promise<void> {
  const fh = await open(path, (await stat(path)).isDirectory() ? "r" : "r+");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
