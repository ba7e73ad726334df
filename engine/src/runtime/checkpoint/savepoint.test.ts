/**
 * Savepoints and restore epochs (savepoint.ts, restore-epoch.ts, merge-cut.ts;
 * docs/decisions/0057-elastic-workers.md) on real files: a savepoint written and read back, a
 * newer format refused naming it, the epoch a savepoint begins entered once and gone on with, an
 * older one refused; and a merge operator at another `mergePartitions`: split from the old
 * operator its keys were in, gathered from the old operators of one aligned checkpoint, any other
 * count refused with what to do.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createCore, defaultCoreConfig, MergeGroups, restoreCore } from "../../core/index.js";
import { parseMergeConfig } from "../config/merge-config.js";
import { RuntimeError } from "../errors.js";
import { checkpointHeader } from "./checkpoint-frame.js";
import { CheckpointStore } from "./checkpoint-store.js";
import { scanCheckpoints } from "./checkpoint-scan.js";
import { planMergeCut } from "./merge-cut.js";
import type { MergeState } from "./merge-state.js";
import { restoreEpoch } from "./restore-epoch.js";
import { readSavepoint, SAVEPOINT_FORMAT, writeSavepoint } from "./savepoint.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "tidemark-savepoint-"));
  dirs.push(d);
  return d;
}

const P = 8;
const all = Array.from({ length: P }, (_, p) => p);
const silent = pino({ level: "silent" });
const cores = { create: createCore, restore: restoreCore };

/** A merge operator's checkpoint of merge partition m of `of`, at barrier n. */
async function mergeFile(data: string, m: number, of: number, n: number, epoch = 0): Promise<string> {
  const store = new CheckpointStore(join(data, "checkpoints", `merge-${m}`), 3);
  await store.open();
  const merge: MergeState = {
    seq: 10 * n,
    aligner: { reportedTo: all.map(() => 1000), workers: all.map(() => "w"), releasedTo: 1000, open: [] },
    lastBarrier: n,
    ...(of > 1 ? { mergePartition: m, mergePartitions: of } : {}),
  };
  const owner = { operatorId: `merge-${m}`, partitionCount: P, partitions: all, epoch };
  const header = checkpointHeader(owner, 1000, Date.now(), { offsets: [], merge }, n, false);
  const core = createCore({ ...defaultCoreConfig(), partitions: P });
  return (await store.write({ header, snapshot: core.snapshot() })).file;
}

function codeOf(err: unknown): string {
  return err instanceof RuntimeError ? `${err.code}: ${err.message}` : String(err);
}

describe("savepoints", () => {
  it("writes every file and the manifest, reads them back, and refuses a newer format naming it", async () => {
    const data = tempDir();
    const file = await mergeFile(data, 0, 1, 4);
    const found = (await scanCheckpoints(join(data, "checkpoints"))).found;
    const to = join(tempDir(), "sp");
    const info = { epoch: 1, cut: "aligned checkpoint 4", n: 4, partitionCount: P, mergePartitions: 1, cutTo: {} };
    await writeSavepoint(to, [{ found: found[0] as (typeof found)[0], role: "merge", mergePartition: 0 }], info);
    const sp = await readSavepoint(to);
    expect(sp.manifest).toMatchObject({
      format: SAVEPOINT_FORMAT,
      ...info,
      operators: [{ id: "merge-0", role: "merge" }],
    });
    expect(readFileSync(join(to, sp.manifest.operators[0]?.file as string))).toEqual(readFileSync(file));
    await expect(writeSavepoint(to, [], info)).rejects.toThrow(/is not empty/);

    const manifest = JSON.parse(readFileSync(join(to, "savepoint.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(to, "savepoint.json"), JSON.stringify({ ...manifest, format: SAVEPOINT_FORMAT + 1 }));
    expect(codeOf(await readSavepoint(to).catch((e: unknown) => e))).toBe(
      `TM_SAVEPOINT_VERSION: --from-savepoint ${to}: savepoint format ${SAVEPOINT_FORMAT + 1}, this tidemark reads formats 1 to ${SAVEPOINT_FORMAT}; restore it with the tidemark that wrote it or a newer one`,
    );
    expect(codeOf(await readSavepoint(tempDir()).catch((e: unknown) => e))).toMatch(
      /^TM_SAVEPOINT_INVALID: .*no savepoint.json there/,
    );
  });

  it("begins its restore epoch once, goes on in it, and refuses a savepoint of an epoch the directory is past", async () => {
    const root = join(tempDir(), "checkpoints");
    const sp = { dir: "/sp/a", manifest: { epoch: 2, cutTo: { "0": 100 } } } as unknown as Parameters<
      typeof restoreEpoch
    >[2];
    expect(await restoreEpoch(root, [], null)).toEqual({ epoch: 0 });
    expect(await restoreEpoch(root, [], sp)).toEqual({ epoch: 2, savepoint: "/sp/a", cutTo: { "0": 100 } });
    // Without the flag, the directory stays in the epoch the savepoint began.
    expect(await restoreEpoch(root, [], null)).toEqual({ epoch: 2, savepoint: "/sp/a", cutTo: { "0": 100 } });
    expect(await restoreEpoch(root, [], sp)).toEqual({ epoch: 2, savepoint: "/sp/a", cutTo: { "0": 100 } });
    const older = { dir: "/sp/b", manifest: { epoch: 2, cutTo: {} } } as unknown as Parameters<typeof restoreEpoch>[2];
    expect(codeOf(await restoreEpoch(root, [], older).catch((e: unknown) => e))).toMatch(
      /^TM_SAVEPOINT_INVALID: --from-savepoint \/sp\/b: it begins restore epoch 2, but .* is already in epoch 2 \(from savepoint \/sp\/a\); restore it into a fresh --data directory/,
    );
  });
});

describe("a merge operator at another mergePartitions", () => {
  const config = (data: string, m: number, of: number) =>
    parseMergeConfig({ flags: { data, "merge-partition": String(m), "merge-partitions": String(of) } });

  it("splits: merge partition m of 4 restores the newest checkpoint of m mod 2 of 2", async () => {
    const data = tempDir();
    await mergeFile(data, 0, 2, 5);
    const one = await mergeFile(data, 1, 2, 5);
    const cut = await planMergeCut(config(data, 3, 4), cores, silent);
    expect(cut.kind).toBe("cut");
    if (cut.kind !== "cut") return;
    expect(cut.loaded.file).toBe(one);
    expect(cut.loaded.cut?.cut).toBe("the merge stage's newest checkpoints: merge partition 1 of 2");
    expect(cut.restored.state).toMatchObject({ seq: 50, lastBarrier: 5, mergePartition: 1, mergePartitions: 2 });
  });

  it("goes on from its own checkpoints once it wrote them at the new count", async () => {
    const data = tempDir();
    await mergeFile(data, 0, 1, 5);
    await mergeFile(data, 1, 2, 6);
    expect((await planMergeCut(config(data, 1, 2), cores, silent)).kind).toBe("same");
  });

  it("gathers: merge partition 0 of 1 restores both old operators' checkpoints of their newest common aligned checkpoint", async () => {
    const data = tempDir();
    const zero = await mergeFile(data, 0, 2, 5);
    await mergeFile(data, 0, 2, 7);
    const one = await mergeFile(data, 1, 2, 5);
    await mergeFile(data, 1, 2, 6);
    const cut = await planMergeCut(config(data, 0, 1), cores, silent);
    expect(cut.kind).toBe("cut");
    if (cut.kind !== "cut") return;
    expect(cut.loaded.cut?.files.map((f) => f.file)).toEqual([zero, one]);
    expect(cut.restored.core).toBeInstanceOf(MergeGroups);
    expect((cut.restored.core as MergeGroups).groups()).toEqual([
      { partition: 0, of: 2 },
      { partition: 1, of: 2 },
    ]);
    expect(cut.restored.state).toMatchObject({ seq: 50, lastBarrier: 5 });
  });

  it("refuses a count neither a multiple nor a divisor, or a gather without a common aligned checkpoint, saying what to do", async () => {
    const data = tempDir();
    await mergeFile(data, 0, 2, 5);
    await mergeFile(data, 1, 2, 6);
    for (const [m, of] of [
      [0, 3],
      [0, 1],
    ])
      expect(
        codeOf(await planMergeCut(config(data, m as number, of as number), cores, silent).catch((e: unknown) => e)),
      ).toMatch(
        /^TM_CHECKPOINT_UNCOVERED: the merge stage's state was written with mergePartitions 2, .*a multiple of the old one, or to a divisor of it .*take a savepoint first/,
      );
  });
});
