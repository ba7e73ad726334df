import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "./checkpoint-store.js";
import type { Checkpoint } from "./checkpoint-codec.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "tidemark-ckpt-"));
  dirs.push(d);
  return d;
}

function checkpoint(n: number): Checkpoint {
  return {
    header: {
      worker: "w",
      partitionCount: 8,
      partitions: [0, 1],
      offsets: [
        { lastSeq: n, partialSeq: 0, partialCount: 0, logTime: 1000 * n },
        { lastSeq: n + 1, partialSeq: n + 5, partialCount: 3, logTime: null },
      ],
      logTime: 1000 * n,
      wallTime: 42,
    },
    snapshot: Uint8Array.from({ length: 100 + n }, (_, i) => (i * 7 + n) & 0xff),
  };
}

describe("CheckpointStore", () => {
  it("writes durably, reads the newest back byte for byte and keeps only the last 3", async () => {
    const dir = tempDir();
    const store = new CheckpointStore(dir, 3);
    await store.open();
    expect((await store.loadNewest()).checkpoint).toBeUndefined();
    for (let n = 1; n <= 5; n++) await store.write(checkpoint(n));
    const files = readdirSync(dir).sort();
    expect(files).toEqual([
      "checkpoint-000000000003.tmck",
      "checkpoint-000000000004.tmck",
      "checkpoint-000000000005.tmck",
    ]);
    const loaded = await store.loadNewest();
    expect(loaded.checkpoint).toEqual(checkpoint(5));
    expect(loaded.skipped).toEqual([]);
  });

  it("reports a corrupt or torn newest file and falls back to the previous one", async () => {
    const dir = tempDir();
    const store = new CheckpointStore(dir, 3);
    await store.open();
    await store.write(checkpoint(1));
    await store.write(checkpoint(2));
    const w3 = await store.write(checkpoint(3));
    const bytes = readFileSync(w3.file);
    bytes.writeUInt8((bytes.at(-40) ?? 0) ^ 0x01, bytes.length - 40); // one flipped bit in the snapshot
    writeFileSync(w3.file, bytes);
    const w2 = join(dir, "checkpoint-000000000002.tmck");
    writeFileSync(w2, readFileSync(w2).subarray(0, 30)); // torn

    const loaded = await new CheckpointStore(dir, 3).loadNewest();
    expect(loaded.checkpoint).toEqual(checkpoint(1));
    expect(loaded.skipped.map((s) => s.reason)).toEqual([
      expect.stringContaining("checksum mismatch"),
      expect.stringContaining("only 30 bytes"),
    ]);
    expect(loaded.skipped[0]?.file).toBe(w3.file);
  });

  it("continues the numbering after a restart and clears leftover temp files", async () => {
    const dir = tempDir();
    const first = new CheckpointStore(dir, 3);
    await first.open();
    await first.write(checkpoint(1));
    writeFileSync(join(dir, ".checkpoint-000000000002.tmck.tmp"), "half a write");
    const second = new CheckpointStore(dir, 3);
    await second.open();
    const w = await second.write(checkpoint(2));
    expect(w.file.endsWith("checkpoint-000000000002.tmck")).toBe(true);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect((await second.loadNewest()).checkpoint).toEqual(checkpoint(2));
  });

  it("loads the completed aligned checkpoint's file when named, unless the newest was written by a graceful stop", async () => {
    const store = new CheckpointStore(tempDir(), 5);
    await store.open();
    const aligned = await store.write({ ...checkpoint(1), header: { ...checkpoint(1).header, barrier: 7 } });
    await store.write(checkpoint(2));
    expect((await store.load(aligned.file)).checkpoint?.header.barrier).toBe(7);
    expect((await store.load(undefined)).checkpoint?.header.logTime).toBe(2000);
    expect((await store.load("/elsewhere/checkpoint-000000000099.tmck")).checkpoint?.header.logTime).toBe(2000);
    await store.write({ ...checkpoint(3), header: { ...checkpoint(3).header, final: true } });
    const loaded = await store.load(aligned.file);
    expect([loaded.checkpoint?.header.logTime, loaded.checkpoint?.header.final]).toEqual([3000, true]);
  });
});
