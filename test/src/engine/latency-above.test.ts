/**
 * Exact counts above the SLOs' latency thresholds on the wire (docs/semantics.md, "Latency
 * thresholds"): a config file whose SLOs name `latencyAboveMs` 100 and 250, a real nats-server, an
 * engine worker and the merge operator, a backfilled recording. Every pane in TM_PANES — route,
 * service and all-services (`*`), every policy — carries `value.latencyAbove` with exactly those
 * keys, each the brute-force count over the recording: the pane holds the first `count` events of
 * its key and window in arrival order (a policy's pane is a prefix, docs/semantics.md, "Policies are
 * snapshot schedules"), and the `*` finals' counts are the recording's truth.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultCoreConfig } from "@tidemark/engine/core";
import { ALL_SERVICES } from "@tidemark/engine/protocol";
import { lastPanes, makeRecording, runBackfill, stopGracefully, tempDir, writeRecording } from "./engine-fixtures.js";
import { allPanes, endStack, startStack, starTruth, waitForMergeEnd, type Stack } from "../merge/merge-fixtures.js";

const THRESHOLDS = [100, 250];
const CONFIG = {
  slos: [
    { name: "api-latency", service: "api", objective: 0.99, sli: { latencyAboveMs: 250 } },
    { name: "all-availability", objective: 0.999, sli: "errors" },
    { name: "web-latency", service: "web", objective: 0.95, sli: { latencyAboveMs: 100 } },
  ],
};

const keyOf = (service: string, route: string | undefined, size: number, start: number): string =>
  JSON.stringify([service, route ?? null, size, start]);

describe("latencyAbove in TM_PANES (real NATS, worker + merge)", () => {
  let stack: Stack | undefined;
  afterAll(async () => endStack(stack));

  it("carries the SLOs' thresholds on every pane, each count exact", async () => {
    const dir = tempDir("latency-above");
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify(CONFIG));
    const events = makeRecording({ events: 3000, seed: 5 });
    const file = writeRecording(dir, events);
    const flags = ["--config", config, "--checkpoint-every", "2s", "--idle-timeout", "120s"];
    stack = await startStack(dir, [[]], flags, ["--config", config]);
    const end = (await runBackfill(stack.nats.url, file)).endOfRecordingTs;
    await waitForMergeEnd(stack.nc, end);
    await Promise.all([...stack.workers, stack.merge].map((p) => stopGracefully(p)));
    const panes = await allPanes(stack.nc);

    const cfg = defaultCoreConfig();
    const byKey = new Map<string, number[]>();
    const put = (k: string, v: number): void => void (byKey.get(k) ?? byKey.set(k, []).get(k))?.push(v);
    for (const e of events)
      for (const w of cfg.windows) {
        const s = Math.floor(e.ts / w.sizeMs) * w.sizeMs;
        put(keyOf(e.service, undefined, w.sizeMs, s), e.latency_ms);
        put(keyOf(e.service, e.route, w.sizeMs, s), e.latency_ms);
        put(keyOf(ALL_SERVICES, undefined, w.sizeMs, s), e.latency_ms);
      }
    const kinds = { route: 0, service: 0, all: 0 };
    let between = 0;
    for (const p of panes) {
      const held = (
        byKey.get(keyOf(p.key.service, p.key.route, p.window.end - p.window.start, p.window.start)) ?? []
      ).slice(0, p.value.count);
      expect(held.length, p.id).toBe(p.value.count);
      const want = Object.fromEntries(THRESHOLDS.map((t) => [String(t), held.filter((x) => x > t).length]));
      expect({ id: p.id, seq: p.seq, latencyAbove: p.value.latencyAbove }).toEqual({
        id: p.id,
        seq: p.seq,
        latencyAbove: want,
      });
      kinds[p.key.route !== undefined ? "route" : p.key.service === ALL_SERVICES ? "all" : "service"]++;
      if ((want["250"] as number) > 0 && (want["100"] as number) < held.length) between++;
    }
    expect(kinds.route).toBeGreaterThan(100);
    expect(kinds.service).toBeGreaterThan(100);
    expect(kinds.all).toBeGreaterThan(20);
    expect(between).toBeGreaterThan(100);

    // The `*` finals hold the recording's truth (so the prefixes above are the right events).
    const last = lastPanes(panes);
    const billing = cfg.policies.find((p) => p.name === "billing")!;
    const lagMs = billing.watermark.kind === "arrival-lag" ? billing.watermark.lagMs : 0;
    const truth = starTruth(events, { name: "billing", lagMs, graceMs: billing.graceMs }, 10_000);
    expect(truth.size).toBeGreaterThan(10);
    for (const [id, t] of truth) {
      const got = last.get(id)?.value.latencyAbove;
      const want = Object.fromEntries(THRESHOLDS.map((x) => [String(x), t.latencies.filter((l) => l > x).length]));
      expect({ id, got }).toEqual({ id, got: want });
    }
  }, 180_000);
});
