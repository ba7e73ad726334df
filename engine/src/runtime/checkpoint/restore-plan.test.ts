/**
 * The restore step on real files (restore-plan.ts, worker-cut.ts; docs/decisions/0057-elastic-workers.md):
 * a worker restored from another layout's checkpoint writes grouped checkpoints, and restarting
 * with the same layout restores its grouped core from them as it was.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createCore, GroupedCore } from "../../core/index.js";
import { partitionOf } from "../../protocol.js";
import { simulate } from "../../core/simulation.js";
import { parseEngineConfig } from "../config/config.js";
import { checkpointHeader } from "./checkpoint-frame.js";
import { CheckpointStore } from "./checkpoint-store.js";
import { planRestore, type CutPlanner } from "./restore-plan.js";
import { workerStateFrame } from "./state-frames.js";
import { planWorkerCut } from "./worker-cut.js";
import type { WorkerState } from "./worker-state.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const silent = pino({ level: "silent" });

const configOf = (data: string, partitions: string) =>
  parseEngineConfig({ flags: { data, partitions, partials: "off" } });

async function restore(config: ReturnType<typeof configOf>) {
  const planCut: CutPlanner<WorkerState> = (f, check, c) => planWorkerCut(config, f, check, silent, c);
  return planRestore(config, undefined, workerStateFrame, silent, undefined, planCut);
}

/** Writes the worker's state as the host's cut does (its header's state, the core's snapshot). */
async function write(config: ReturnType<typeof configOf>, state: WorkerState, snapshot: Uint8Array): Promise<void> {
  const store = new CheckpointStore(config.checkpointDir, 3);
  await store.open();
  const owner = { operatorId: config.worker, partitionCount: config.partitionCount, partitions: config.partitions };
  const header = checkpointHeader(owner, 1, Date.now(), workerStateFrame.write(state), undefined, true);
  await store.write({ header, snapshot });
}

describe("planRestore", () => {
  it("restores a grouped worker's own checkpoint, the same layout restarting, into the same groups", async () => {
    const data = mkdtempSync(join(tmpdir(), "tidemark-restore-plan-"));
    dirs.push(data);
    const one = configOf(data, "0-7");
    const core = createCore(one.core);
    const out = { pane: () => undefined, late: () => undefined };
    for (const e of simulate({ events: 3000, seed: 4 })) core.event(partitionOf(e.service, 8), e, out);
    const offsets = one.partitions.map(() => ({ lastSeq: 9, partialSeq: 0, partialCount: 0, logTime: 1 }));
    await write(one, { offsets }, core.snapshot());

    const low = configOf(data, "0-3");
    const split = await restore(low);
    const grouped = split.restored?.core as GroupedCore;
    expect(grouped).toBeInstanceOf(GroupedCore);
    const state = { ...(split.restored?.state as WorkerState), groups: grouped.groups() };
    await write(low, state, grouped.snapshot());

    const again = await restore(low);
    expect(again.loaded.cut).toBeUndefined();
    expect(again.restored?.core).toBeInstanceOf(GroupedCore);
    expect((again.restored?.core as GroupedCore).groups()).toEqual(grouped.groups());
    expect(again.restored?.core.status().stateKeys).toBe(grouped.status().stateKeys);
  });
});
