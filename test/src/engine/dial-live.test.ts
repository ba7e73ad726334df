/**
 * The honest dial through the real pipeline (docs/semantics.md, "Measured bias", "Correlated
 * lateness"): a stream where one service's delayed requests fail far more often, backfilled through
 * a real nats-server into `tidemark engine`, read back from TM_PANES, tm.status and a real
 * `tidemark dashboard`'s /api/policies, against the dial written out from the raw events
 * (dial-truth.ts), to 1e-9: the figures are means of ratios of exact counts.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultCoreConfig, simulate, withCorrelatedFailures } from "@tidemark/engine/core";
import type { EngineStatusMessage, Pane, ServiceDial } from "@tidemark/engine/protocol";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import { launchBrowser } from "../dashboard/browser.js";
import {
  connectNats,
  dedupePanes,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "./engine-fixtures.js";
import {
  cellsOf,
  finalLimit,
  meanOfLast,
  onTimeLimit,
  referenceOf,
  sample,
  tally,
  type Cell,
  type LagPolicy,
} from "./dial-truth.js";

const W = 10_000;
const CULPRIT = "c";
const START_MS = 1_699_999_980_000;
const SPAN_MS = 600_000;
const EVENTS = withCorrelatedFailures(
  simulate({ seed: 7, events: 24_000, spanMs: SPAN_MS, services: 4, startMs: START_MS }),
  { service: CULPRIT, minDelayMs: 2_000, failRate: 0.3, seed: 8 },
);

const CONFIG = defaultCoreConfig();
const H = CONFIG.referenceHorizonMs;
const N = CONFIG.biasWindows;
/** Means of ratios of exact counts: equal up to floating-point rounding. */
const EXACT = 1e-9;
const DASHBOARD: LagPolicy = (() => {
  const p = CONFIG.policies.find((x) => x.name === "dashboard")!;
  return { lagMs: (p.watermark as { lagMs: number }).lagMs, graceMs: p.graceMs, mode: p.mode };
})();
const CELLS = cellsOf(EVENTS, W);
const INPUTS = EVENTS.map((e) => e.ingest_ts);

function expectExact(actual: number | null | undefined, want: number | null, what: string): void {
  if (want === null) return void expect(actual ?? null, what).toBeNull();
  expect(actual, what).not.toBeNull();
  expect(Math.abs((actual as number) - want), `${what}: ${actual} vs ${want}`).toBeLessThan(EXACT);
}

/**
 * The service's windows the reference closed before a pane emitted at log time `t` (closed at
 * an event at or after end + horizon and before t); null when a heartbeat may have closed one at
 * a time the events do not tell (end + horizon ≤ t with no event in between).
 */
function closedBefore(cells: readonly Cell[], t: number): Cell[] | null {
  const out: Cell[] = [];
  for (const c of cells) {
    if (c.end + H > t) continue;
    if (!INPUTS.some((x) => x >= c.end + H && x < t)) return null;
    out.push(c);
  }
  return out;
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
      // tm.status: the dashboard policy's per-service dials, the culprit alone flagged, as the raw
      // events have them over the windows the reference closed by then.
      const live = status.policies.find((p) => p.name === "dashboard");
      const flagged = (live?.services ?? [])
        .filter((d) => d.windowMs === W && d.lateness.flagged)
        .map((d) => d.service);
      expect(flagged).toEqual([CULPRIT]);
      for (const service of ["a", "b", "c", "d"]) {
        const l = dashboardDial(live?.services ?? [], service);
        const closed = CELLS.get(service)!.filter((c) => c.end + H <= (status.logTime as number));
        const stage = (limit: (p: LagPolicy, c: Cell) => number) =>
          closed.map((c) =>
            sample(
              referenceOf(c, H),
              tally(c.events, (e) => e.ingest_ts < limit(DASHBOARD, c)),
            ),
          );
        expect(l?.final.windows).toBe(Math.min(N, closed.length));
        expect(closed.length).toBeGreaterThanOrEqual(20);
        const finals = stage(finalLimit);
        const onTimes = stage(onTimeLimit);
        expectExact(
          l?.final.errorRatePp,
          meanOfLast(
            finals.map((x) => x.errorRatePp),
            N,
          ),
          `${service} final pp`,
        );
        expectExact(
          l?.final.countPct,
          meanOfLast(
            finals.map((x) => x.countPct),
            N,
          ),
          `${service} final %`,
        );
        expectExact(
          l?.onTime.errorRatePp,
          meanOfLast(
            onTimes.map((x) => x.errorRatePp),
            N,
          ),
          `${service} on-time pp`,
        );
        expectExact(
          l?.onTime.countPct,
          meanOfLast(
            onTimes.map((x) => x.countPct),
            N,
          ),
          `${service} on-time %`,
        );
        const last = closed.slice(-N);
        const late = last.reduce(
          (n, c) => n + c.events.length - tally(c.events, (e) => e.ingest_ts < onTimeLimit(DASHBOARD, c)).count,
          0,
        );
        expect(l?.lateness.lateEvents, `${service} late events`).toBe(late);
      }
      expect(dashboardDial(live?.services ?? [], CULPRIT)?.final.errorRatePp).toBeLessThan(-1);

      // TM_PANES: each service's newest measured on-time pane (emitted where the events tell which
      // windows the reference had closed) carries its own service's bias and nowcast error.
      const all = [...dedupePanes(await readStream(nc, "TM_PANES")).values()];
      const onTime = all.filter(
        (p) =>
          p.policy === "dashboard" &&
          p.kind === "on-time" &&
          p.window.end - p.window.start === W &&
          p.key.route === undefined,
      );
      for (const service of ["a", "b", "c", "d"]) {
        const mine = onTime.filter((p) => p.key.service === service).sort((x, y) => x.seq - y.seq);
        const published = new Map(mine.map((p) => [p.window.start, p]));
        const cells = CELLS.get(service)!;
        const p = mine
          .filter((x) => x.bias.windows > 0 && closedBefore(cells, x.emittedAt) !== null)
          .sort((x, y) => x.window.start - y.window.start)
          .at(-1) as Pane;
        expect([p.bias.stage, p.bias.scope, p.bias.provisional]).toEqual(["on-time", "service", false]);
        const closed = closedBefore(cells, p.emittedAt) as Cell[];
        const raw = closed.map((c) =>
          sample(
            referenceOf(c, H),
            tally(c.events, (e) => e.ingest_ts < onTimeLimit(DASHBOARD, c)),
          ),
        );
        expect(p.bias.windows, `${service} pane bias windows`).toBe(Math.min(N, closed.length));
        expectExact(
          p.bias.errorRatePp,
          meanOfLast(
            raw.map((x) => x.errorRatePp),
            N,
          ),
          `${service} pane pp`,
        );
        expectExact(
          p.bias.countPct,
          meanOfLast(
            raw.map((x) => x.countPct),
            N,
          ),
          `${service} pane %`,
        );
        if (service === CULPRIT) expect(p.bias.errorRatePp).toBeLessThan(-1);
        else expect(Math.abs(p.bias.errorRatePp as number)).toBeLessThan(0.5);
        // Its nowcast's error: the published nowcasts of the closed windows against the reference.
        const measured = closed.filter((c) => published.get(c.start)?.nowcast !== undefined);
        const errs = measured.map((c) => {
          const r = referenceOf(c, H);
          const nc = published.get(c.start)!.nowcast!.value;
          return {
            countPct: (100 * (nc.count - r.count)) / r.count,
            errorRatePp: 100 * (nc.errorRate - r.errors / r.count),
          };
        });
        expect(p.nowcast?.error.windows, `${service} nowcast windows`).toBe(Math.min(N, measured.length));
        expect(measured.length).toBeGreaterThan(0);
        expectExact(
          p.nowcast?.error.countPct,
          meanOfLast(
            errs.map((x) => x.countPct),
            N,
          ),
          `${service} nowcast %`,
        );
        expectExact(
          p.nowcast?.error.errorRatePp,
          meanOfLast(
            errs.map((x) => x.errorRatePp),
            N,
          ),
          `${service} nowcast pp`,
        );
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
