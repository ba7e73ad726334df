/**
 * The health panel and a merge operator (docs/operations.md, "Merge stage"), in a real browser: a
 * worker and the merge operator publish tm.status on a real nats-server; the merge operator's row
 * names the upstream worker holding the merged watermark back, and its partition is marked; the
 * pooled dial of /api/policies is the worker's alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { SUBJECT_STATUS, type EngineStatusMessage } from "@tidemark/engine/protocol";
import { launchBrowser } from "./browser.js";
import { startRig, type DashboardRig } from "./fixtures.js";
import { scenarioStatus } from "./scenario.js";

/** The merge operator's status: every partition reported to `logTime` but 5, which engine-4-7 left 7 s behind. */
function mergeStatus(now: number): EngineStatusMessage {
  const worker = scenarioStatus(now, 0);
  const logTime = (worker.logTime as number) - 200;
  return {
    ...worker,
    worker: "merge-0",
    logTime,
    partitions: worker.partitions.map((p) => ({
      ...p,
      logTime: p.partition === 5 ? logTime - 7_000 : logTime,
      idle: false,
      lastSeq: 0,
    })),
    heldBackBy: 5,
    policies: worker.policies.map((p) => ({ ...p, emitDelayMs: 99_999 })),
    merge: {
      heldBackByWorker: "engine-4-7",
      waitingTicks: 70,
      batches: { accepted: 900, duplicate: 3, overlap: 0, malformed: 0 },
    },
  };
}

describe("health panel with a merge operator (real browser)", () => {
  let rig: DashboardRig;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let timer: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    rig = await startRig({}, { stream: true });
    const publish = (): void => {
      const now = Date.now();
      rig.nc.publish(SUBJECT_STATUS, JSON.stringify({ ...scenarioStatus(now, 0), heldBackBy: null }));
      rig.nc.publish(SUBJECT_STATUS, JSON.stringify(mergeStatus(now)));
    };
    publish();
    timer = setInterval(publish, 300);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    clearInterval(timer);
    await browser?.close();
    await rig?.stop();
  });

  it("names the worker holding the merge stage back, and keeps the merge operator out of the pooled dial", async () => {
    await page.goto(`${rig.dash.url}/?window=10s&range=15m`);
    const health = page.getByTestId("panel-health");
    const alarm = health.getByTestId("health-alarm");
    await alarm.filter({ hasText: "Merge stage" }).waitFor({ timeout: 15_000 });
    expect((await alarm.allTextContents()).map((t) => t.trim())).toEqual([
      "⚠ Merge stage held back by worker engine-4-7: its partition 5 is 7 s behind",
    ]);
    const rows = health.getByTestId("partition-5");
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain("stalled · holds watermark");
    expect(await health.textContent()).toContain("merge-0");

    const body = (await (await fetch(`${rig.dash.url}/api/policies`)).json()) as {
      policies: Array<{ name: string; emitDelayMs: number | null }>;
    };
    const dashboard = body.policies.find((p) => p.name === "dashboard");
    expect(dashboard?.emitDelayMs).not.toBe(99_999);
    expect(dashboard?.emitDelayMs).toBe(scenarioStatus(Date.now(), 0).policies[0]?.emitDelayMs);
  });
});
