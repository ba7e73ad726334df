/**
 * Files `tidemark load` writes (docs/operations.md, "`tidemark load`"): the `--record` NDJSON,
 * streamed as batches are accepted (never held in memory), and the `--accepted` ledger, written
 * once at the end. Both are opened at the start, so a path that cannot be written stops the run
 * before any traffic.
 */
import { closeSync, createWriteStream, openSync, writeSync, type WriteStream } from "node:fs";
import { once } from "node:events";
import { DeployError } from "../errors.js";

function open(path: string, flag: string): number {
  try {
    return openSync(path, "w");
  } catch (err) {
    throw new DeployError(
      "TM_LOAD_OUTPUT",
      `cannot write ${flag} ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)}): pass a path in a writable directory`,
    );
  }
}

function writeFailed(path: string, err: unknown): DeployError {
  return new DeployError(
    "TM_LOAD_OUTPUT",
    `writing --record ${path} failed (${(err as NodeJS.ErrnoException).code ?? String(err)}): free disk space or pass another path`,
  );
}

export class RecordFile {
  private readonly stream: WriteStream;
  private failed: Error | undefined;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { fd: open(path, "--record") });
    this.stream.on("error", (err) => (this.failed = err));
  }

  /** Appends `chunk`; waits when the disk is behind, so lines never pile up in memory. */
  async write(chunk: string): Promise<void> {
    try {
      if (this.failed) throw this.failed;
      if (chunk !== "" && !this.stream.write(chunk)) await once(this.stream, "drain");
    } catch (err) {
      throw writeFailed(this.path, err);
    }
  }

  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, "close");
    if (this.failed) throw writeFailed(this.path, this.failed);
  }
}

/** A file written whole at the end (the `--accepted` ledger), opened now. */
export class LedgerFile {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = open(path, "--accepted");
  }

  write(json: unknown): void {
    writeSync(this.fd, JSON.stringify(json) + "\n");
    closeSync(this.fd);
  }
}
