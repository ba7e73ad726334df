/**
 * The honest dial through the real pipeline (docs/semantics.md, "Measured bias", "Correlated
 * lateness"): a stream where one service's delayed requests fail far more often, backfilled through
 * a real nats-server into `tidemark engine`, read back from TM_PANES, tm.status and a real
 * `tidemark dashboard`'s /api/policies, against the same stream through the core offline.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createCore,
  simulate,
  validateCoreConfig,
  withCorrelatedFailures,
  type CoreStatus,
} from "@tidemark/engine/core";
import { partitionOf, type EngineStatusMessage, type Pane, type ServiceDial } from "@tidemark/engine/protocol";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import { launchBrowser } from "../dashboard/browser.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";

const W = 10_000;
const CULPRIT = "c";
const START_MS = 1_699_999_980_000;
const SPAN_MS = 600_000;
const EVENTS = withCorrelatedFailures(
  simulate({ seed: 7, events: 24_000, spanMs: SPAN_MS, services: 4, startMs: START_MS }),
  { service: CULPRIT, minDelayMs: 2_000, failRate: 0.3, seed: 8 },
);

/**
 * The same stream through the core offline, with the engine's default configuration (8 partitions),
 * up to backfill's end of recording (its heartbeats carry log time a reference horizon past the last event).
 */
function offline(endOfRecordingTs: number): { status: CoreStatus; panes: Map<string, Pane> } {
  const config = validateCoreConfig({});
  const core = createCore(config);
  const panes = new Map<string, Pane>();
  const out = { pane: (p: Pane) => void panes.set(p.id, p), late: () => {} };
  for (const e of EVENTS) core.event(partitionOf(e.service, config.partitions), e, out);
  for (let p = 0; p < config.partitions; p++) core.heartbeat(p, endOfRecordingTs, out);
  return { status: core.status(), panes };
}

const dashboardDial = (services: readonly ServiceDial[], service: string) =>
  services.find((d) => d.service === service && d.windowMs === W);

describe("the dial through nats-server, tidemark engine and tidemark dashboard", () => {
  let nats: TestNats | undefined;
  let engine: CliProcess | undefined;
  let dash: CliProcess | undefined;
  afterAll(async () => {
    if (engine) await stopGracefully(engine);
    if (dash) await stopGracefully(dash);
    await nats?.stop();
  });

  it("the correlated service's panes carry its own bias, tm.status, /api/policies and the page name it flagged", async () => {
    nats = await startTestNats();
    const dir = tempDir("dial-live");
    const nc = await connectNats(nats.url);
    try {
      engine = startEngine(nats.url, join(dir, "data"), ["--idle-timeout", "1h"]);
      dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url]);
      await engine.ready;
      const url = (await dash.ready)["dashboard"] as string;
      const summary = await runBackfill(nats.url, writeRecording(dir, EVENTS));
      const status: EngineStatusMessage = await waitForStatus(
        nc,
        (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs,
        120_000,
        "end of recording",
      );
      const want = offline(summary.endOfRecordingTs);

      // tm.status: the dashboard policy's per-service dials, the culprit alone flagged, as offline.
      const live = status.policies.find((p) => p.name === "dashboard");
      const off = want.status.policies.find((p) => p.name === "dashboard");
      const flagged = (live?.services ?? [])
        .filter((d) => d.windowMs === W && d.lateness.flagged)
        .map((d) => d.service);
      expect(flagged).toEqual([CULPRIT]);
      for (const service of ["a", "b", "c", "d"]) {
        const l = dashboardDial(live?.services ?? [], service);
        const o = dashboardDial(off?.services ?? [], service);
        expect(l?.final.windows).toBeGreaterThanOrEqual(20);
        expect(Math.abs((l?.final.errorRatePp as number) - (o?.final.errorRatePp as number))).toBeLessThan(0.05);
        expect(Math.abs((l?.onTime.errorRatePp as number) - (o?.onTime.errorRatePp as number))).toBeLessThan(0.05);
        expect(l?.lateness.lateEvents).toBe(o?.lateness.lateEvents);
      }
      expect(dashboardDial(live?.services ?? [], CULPRIT)?.final.errorRatePp).toBeLessThan(-1);

      // TM_PANES: each service's newest measured on-time pane carries its own service's bias.
      const panes = [...lastPanes(dedupePanes(await readStream(nc, "TM_PANES")).values()).values()];
      const newestOnTime = (service: string) =>
        panes
          .filter((p) => p.policy === "dashboard" && p.kind === "on-time" && p.window.end - p.window.start === W)
          .filter((p) => p.key.service === service && p.key.route === undefined && p.bias.windows > 0)
          .sort((x, y) => x.window.start - y.window.start)
          .at(-1) as Pane;
      for (const service of ["a", "b", "c", "d"]) {
        const p = newestOnTime(service);
        expect([p.bias.stage, p.bias.scope, p.bias.provisional]).toEqual(["on-time", "service", false]);
        const o = want.panes.get(p.id);
        expect(Math.abs((p.bias.errorRatePp as number) - (o?.bias.errorRatePp as number))).toBeLessThan(0.05);
        if (service === CULPRIT) expect(p.bias.errorRatePp).toBeLessThan(-1);
        else expect(Math.abs(p.bias.errorRatePp as number)).toBeLessThan(0.5);
        expect(p.nowcast?.error.windows).toBeGreaterThan(0);
      }

      // A real dashboard's /api/policies lists the culprit flagged, with its on-time and final bias.
      type Listed = {
        name: string;
        services?: Array<{ service: string } & Pick<ServiceDial, "onTime" | "final" | "lateness">>;
      };
      let listed: Listed | undefined;
      await waitFor(
        async () => {
          const body = (await (await fetch(`${url}/api/policies`)).json()) as { policies: Listed[] };
          listed = body.policies.find((p) => p.name === "dashboard");
          return (listed?.services ?? []).some((d) => d.service === CULPRIT && d.lateness.flagged);
        },
        30_000,
        "the culprit flagged on /api/policies",
      );
      const culprit = listed?.services?.find((d) => d.service === CULPRIT);
      expect(culprit?.final.errorRatePp).toBeLessThan(-1);
      expect(culprit?.onTime.stage).toBe("on-time");
      expect(listed?.services?.filter((d) => d.lateness.flagged).map((d) => d.service)).toEqual([CULPRIT]);

      // Chromium on that dashboard: the culprit's panels warn with the engine's measured ratio and
      // on-time bias (as the page rounds them); another service's panels do not.
      const browser = await launchBrowser();
      try {
        const page = await browser.context.newPage();
        // The recording's own time range (its windows are years before the wall clock).
        const range = `range=custom&from=${START_MS - 60_000}&to=${START_MS + SPAN_MS + 60_000}&live=0&window=10s`;
        await page.goto(`${url}/?services=${CULPRIT}&${range}`);
        const warning = page.getByTestId("panel-errorRate").getByTestId("lateness-warning");
        await warning.waitFor({ timeout: 30_000 });
        const said = ((await warning.textContent()) ?? "").trim();
        const m =
          /^\u26a0 late requests of c fail ([\d.]+)\u00d7 more often: dashboard under-reports its error rate by \u2248 ([\d.]+) pp$/.exec(
            said,
          );
        expect(m, said).not.toBeNull();
        expect(Math.abs(Number(m?.[1]) - (culprit?.lateness.ratio as number)), said).toBeLessThanOrEqual(0.051);
        expect(Math.abs(Number(m?.[2]) + (culprit?.onTime.errorRatePp as number)), said).toBeLessThanOrEqual(0.051);
        await page.goto(`${url}/?services=a&${range}`);
        await page.getByTestId("panel-errorRate").getByTestId("legend-bias").first().waitFor({ timeout: 30_000 });
        expect(await page.getByTestId("lateness-warning").count()).toBe(0);
      } finally {
        await browser.close();
      }
    } finally {
      await nc.close();
    }
    // Its own waits (the recording's end, /api/policies, the page) add up to more than the default 60 s.
  }, 300_000);
});
