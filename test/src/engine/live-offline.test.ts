/**
 * Live equals offline (docs/operations.md, "Backfill"): a recording backfilled through NATS into
 * the live engine gives, per policy, the same final (window, service) values as `tidemark frontier
 * --json` on the same file: dropped events, wrong windows, events lost, largest error, accuracy,
 * error-rate bias.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { FrontierResult } from "@tidemark/engine/core";
import type { EngineStatusMessage, Pane, TelemetryEvent } from "@tidemark/engine/protocol";
import { startTestNats, type TestNats } from "../index.js";
import { spawnTidemark } from "../harness/processes.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  makeRecording,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

const WINDOW_MS = 10_000;
const POLICIES = ["dashboard", "alerting", "billing"];

/** The frontier's measures, computed from the live engine's final panes. */
function measures(
  events: readonly TelemetryEvent[],
  finals: readonly Pane[],
): Omit<FrontierResult["policies"][number], "lag_ms" | "grace_ms" | "emit_delay_ms" | "dropped"> {
  const truth = new Map<string, { count: number; errors: number }>();
  for (const e of events) {
    const pair = `${Math.floor(e.ts / WINDOW_MS) * WINDOW_MS}|${e.service}`;
    const t = truth.get(pair) ?? { count: 0, errors: 0 };
    t.count++;
    if (e.status >= 500) t.errors++;
    truth.set(pair, t);
  }
  const got = new Map(finals.map((p) => [`${p.window.start}|${p.key.service}`, p.value]));
  let wrong = 0;
  let lost = 0;
  let maxError = 0;
  let bias = 0;
  let biasN = 0;
  for (const [pair, t] of truth) {
    const f = got.get(pair) ?? { count: 0, errors: 0 };
    if (f.count !== t.count) wrong++;
    lost += t.count - f.count;
    maxError = Math.max(maxError, t.count - f.count);
    if (f.count > 0) {
      bias += 100 * (f.errors / f.count - t.errors / t.count);
      biasN++;
    }
  }
  const round = (x: number, d: number): number => Math.round(x * 10 ** d) / 10 ** d;
  return {
    wrong_windows: wrong,
    lost,
    max_error: maxError,
    accuracy_pct: round(100 * (1 - lost / events.length), 4),
    error_rate_bias_pp: biasN === 0 ? null : round(bias / biasN, 6),
  };
}

describe("live equals offline", () => {
  let nats: TestNats | undefined;
  afterAll(async () => {
    await nats?.stop();
  });

  it("the backfilled live engine and tidemark frontier agree on every policy's loss, errors and bias", async () => {
    nats = await startTestNats();
    const dir = tempDir("live-offline");
    const events = makeRecording({ events: 4000, seed: 11 });
    const file = writeRecording(dir, events);
    const config = join(dir, "tidemark.config.json");
    writeFileSync(config, JSON.stringify({ windows: [`${WINDOW_MS / 1000}s`] }));

    const nc = await connectNats(nats.url);
    try {
      const engine = startEngine(nats.url, join(dir, "data"), ["--config", config]);
      await engine.ready;
      const summary = await runBackfill(nats.url, file, ["--config", config]);
      const status: EngineStatusMessage = await waitForStatus(
        nc,
        (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs,
        60_000,
        "end of recording",
      );
      await stopGracefully(engine);
      const last = [...lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values()).values()].filter(
        (p) => p.key.route === undefined,
      );

      const offline = spawnTidemark([
        "frontier",
        "--input",
        file,
        "--window",
        "10s",
        "--config",
        config,
        "--json",
        ...POLICIES.flatMap((p) => ["--policy", p]),
      ]);
      expect(await offline.exited, offline.output()).toBe(0);
      const frontier = JSON.parse(offline.output().trim().split("\n").at(-1) as string) as FrontierResult;
      expect(frontier.events).toBe(events.length);

      POLICIES.forEach((name, i) => {
        const off = frontier.policies[i] as FrontierResult["policies"][number];
        const live = measures(
          events,
          last.filter((p) => p.policy === name),
        );
        const dropped = status.policies.find((p) => p.name === name)?.dropped;
        expect({ policy: name, dropped, ...live }).toEqual({
          policy: name,
          dropped: off.dropped,
          wrong_windows: off.wrong_windows,
          lost: off.lost,
          max_error: off.max_error,
          accuracy_pct: off.accuracy_pct,
          error_rate_bias_pp: off.error_rate_bias_pp,
        });
      });
      // The comparison has teeth: the fast policy loses events, the slow one none.
      expect(frontier.policies[0]?.lost).toBeGreaterThan(0);
      expect(frontier.policies[2]?.lost).toBe(0);
    } finally {
      await nc.close();
    }
  });
});
