import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { SUBJECT_STATUS, type Pane } from "@tidemark/engine/protocol";
import type { Page } from "playwright-core";
import { resolveConfig, startDashboard } from "@tidemark/dashboard";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import { ARTIFACTS, launchBrowser } from "./browser.js";
import { createPanesStream, pane, publishPanes } from "./fixtures.js";
import { POLICIES, scenarioPanes, scenarioStatus } from "./scenario.js";

const W = 10_000;
/** The README screenshot, refreshed only on request: TIDEMARK_UPDATE_SCREENSHOT=1. */
const README_SHOT = fileURLToPath(new URL("../../../docs/img/dashboard.png", import.meta.url));
const CHECKOUT_SHAPE = { p50: 50, p95: 231, p99: 420, users: 372 };
/** Awaits `p`, or fails naming the step when it takes longer than `ms`. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
const bias = (name: string) => POLICIES.find((p) => p.name === name)?.bias;

describe("dashboard in a real browser (panes and status published to a real nats-server)", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let dash: CliProcess;
  let url: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let statusTimer: NodeJS.Timeout;
  const now = Date.now();
  const newest = Math.floor(now / W) * W;
  // The newest checkout window under "dashboard" is still open: an early pane. Under "billing"
  // the newest checkout pane is the last window that ended 100 s ago: a final pane.
  const billingStart = Math.floor((now - 100_000) / W) * W - W;
  const dashEarly = pane({
    policy: "dashboard",
    service: "checkout",
    windowMs: W,
    start: newest,
    seq: 0,
    kind: "early",
    count: 1234,
    errors: 36,
    ...CHECKOUT_SHAPE,
    emitDelayMs: 2000,
    pipelineLagMs: 40,
    bias: bias("dashboard"),
  });
  const billingFinal = pane({
    policy: "billing",
    service: "checkout",
    windowMs: W,
    start: billingStart,
    seq: 3,
    kind: "final",
    count: 1318,
    errors: 38,
    ...CHECKOUT_SHAPE,
    emitDelayMs: 100_000,
    pipelineLagMs: 40,
    bias: bias("billing"),
  });

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url, noAsyncTraces: true });
    await createPanesStream(nc);
    const crafted = new Map([dashEarly, billingFinal].map((p) => [p.id, p]));
    const panes: Pane[] = scenarioPanes(now, 15 * 60_000).filter((p) => !crafted.has(p.id) && p.window.start <= newest);
    await publishPanes(nc, [...panes, ...crafted.values()]);
    // Partition 3 has been silent for 42 s and holds the watermark back; partition 6 is idle.
    const status = (): void => nc.publish(SUBJECT_STATUS, JSON.stringify(scenarioStatus(Date.now(), 42_000)));
    status();
    statusTimer = setInterval(status, 500);
    dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url]);
    url = (await dash.ready)["dashboard"] as string;
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    clearInterval(statusTimer);
    await browser?.close();
    dash?.child.kill("SIGTERM");
    await dash?.exited;
    await nc?.close();
    await nats?.stop();
  });

  const kindShown = (panel: string, kind: string) =>
    page.getByTestId(`panel-${panel}`).getByTestId("kind").filter({ hasText: kind }).waitFor();
  const headline = async (panel: string) => {
    const root = page.getByTestId(`panel-${panel}`);
    const text = async (id: string) => ((await root.getByTestId(id).textContent()) ?? "").trim();
    return {
      value: await text("value"),
      bias: await text("bias"),
      delay: await text("delay"),
      kind: await text("kind"),
    };
  };

  it("shows each headline with its pane's value, bias, emit delay and kind; switching one panel's policy changes only that panel", async () => {
    await page.goto(`${url}/?services=checkout&window=10s&range=15m`);
    await page.getByTestId("panel-requests").getByTestId("kind").waitFor();
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor();

    expect(await headline("requests")).toEqual({
      value: "123 req/s",
      bias: "bias \u22126.4 %, 30 win.",
      delay: "emit 2 s + 40 ms pipeline",
      kind: "early",
    });
    const errorsBefore = await headline("errorRate");
    expect(errorsBefore).toEqual({
      value: "2.92 %",
      bias: "bias \u22121.5 pp, 30 win.",
      delay: "emit 2 s + 40 ms pipeline",
      kind: "early",
    });
    // usersPct 3.1 is a shortfall: shown as policy − reference, like the count bias.
    expect((await headline("users")).bias).toBe("bias \u22123.1 %, 30 win.");
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-checkout.png"), fullPage: true });

    await page.getByTestId("panel-requests").getByTestId("policy").selectOption("billing");
    await kindShown("requests", "final");
    expect(await headline("requests")).toEqual({
      value: "132 req/s",
      bias: "bias 0 %, 30 win.",
      delay: "emit 1 m 40 s + 40 ms pipeline",
      kind: "final",
    });
    expect(await headline("errorRate")).toEqual(errorsBefore);
    expect(new URL(page.url()).searchParams.get("policy.requests")).toBe("billing");

    // The choice lives in the URL: a reload keeps it.
    await page.reload();
    await kindShown("requests", "final");
    expect((await headline("requests")).value).toBe("132 req/s");
  });

  it("replaces an early value in place when the on-time pane of its window arrives", async () => {
    await publishPanes(nc, [
      {
        ...dashEarly,
        seq: 1,
        kind: "on-time",
        value: { ...dashEarly.value, count: 1250, errors: 30, errorRate: 30 / 1250 },
      },
    ]);
    await kindShown("errorRate", "on-time");
    expect(await headline("errorRate")).toMatchObject({ value: "2.4 %", kind: "on-time" });
  });

  it("keeps the header's service variable, window size and time range in the URL", async () => {
    await page.goto(`${url}/?services=checkout&window=10s&range=15m`);
    await kindShown("requests", "");
    const legend = () => page.getByTestId("panel-requests").locator("tbody td.name").allTextContents();
    expect(await legend()).toEqual(["checkout"]);
    await page.getByRole("button", { name: /service/ }).click();
    await page.getByRole("option", { name: "search" }).click();
    await waitFor(async () => (await legend()).length === 2, 5000, "two services in the legend");
    expect(await legend()).toEqual(["checkout", "search"]);
    await page.getByLabel("Time range").selectOption("1h");
    await page.getByLabel("Window size").selectOption("60000");
    const q = new URL(page.url()).searchParams;
    expect([q.get("services"), q.get("range"), q.get("window")]).toEqual(["checkout,search", "1h", "60s"]);
    // No 60 s panes were published: the panels say so instead of going blank.
    expect(await page.getByTestId("panel-requests").getByTestId("empty").textContent()).toContain(
      "No dashboard panes for 60 s windows of checkout, search",
    );
  });

  it("shares the crosshair: hovering one chart shows the values at that time in every panel's legend", async () => {
    await page.goto(`${url}/?window=10s&range=15m`);
    await page.getByTestId("panel-requests").locator(".u-over").waitFor();
    const before = await page.getByTestId("panel-p99").locator("thead").textContent();
    expect(before).not.toContain("At cursor");
    const box = await page.getByTestId("panel-requests").locator(".u-over").boundingBox();
    if (!box) throw new Error("no chart in the request-rate panel");
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await page.getByTestId("panel-p99").locator("thead").filter({ hasText: "At cursor" }).waitFor();
    const row =
      (await page.getByTestId("panel-p99").locator("tbody tr").first().locator("td").nth(1).textContent()) ?? "";
    expect(row).toMatch(/^\d+ ms$/);
    await page.mouse.move(0, 0);
  });

  it("makes the stalled partition obvious in the health panel, and the idle one excluded", async () => {
    const health = page.getByTestId("panel-health");
    await health.getByTestId("partition-3").waitFor();
    expect(await health.getByTestId("health-alarm").textContent()).toMatch(
      /Watermark stalled: partition 3 is 42 s behind and holds it back/,
    );
    expect(await health.getByTestId("partition-3").textContent()).toContain("stalled · holds watermark");
    expect(await health.getByTestId("partition-6").textContent()).toContain("idle · excluded");
    expect(await health.getByTestId("partition-0").textContent()).toContain("active");
    // Every service, one panel switched to the exact policy: the README screenshot.
    await page.goto(`${url}/?window=10s&range=15m&policy.errorRate=billing`);
    await kindShown("errorRate", "final");
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });
    if (process.env["TIDEMARK_UPDATE_SCREENSHOT"] === "1") {
      mkdirSync(join(README_SHOT, ".."), { recursive: true });
      copyFileSync(join(ARTIFACTS, "dashboard.png"), README_SHOT);
    }
  });

  it("shows designed empty states while the engine has not created TM_PANES", async () => {
    const bare = await startTestNats();
    const empty = await startDashboard(resolveConfig({ port: 0, nats: bare.url, logLevel: "warn", retryMs: "200ms" }));
    const p = await browser.context.newPage();
    try {
      await p.goto(`${empty.url}/?window=60s`, { timeout: 15_000 });
      await p.getByTestId("state-banner").filter({ hasText: "Waiting for the engine" }).waitFor({ timeout: 15_000 });
      expect(await p.getByTestId("panel-requests").getByTestId("empty").textContent()).toContain(
        "Nothing to show until the engine publishes panes",
      );
      expect(await p.getByTestId("panel-health").textContent()).toContain("No engine has reported");
      await p.screenshot({ path: join(ARTIFACTS, "dashboard-empty.png") });
    } finally {
      await within(10_000, "closing the page", p.close());
      await within(10_000, "closing the dashboard server", empty.close());
      await within(10_000, "stopping nats-server", bare.stop());
    }
  });

  it("says so when the dashboard server goes away, and comes back by itself when it returns", async () => {
    const before = await headline("requests");
    dash.child.kill("SIGTERM");
    await dash.exited;
    await waitFor(
      async () =>
        (
          (await page
            .getByTestId("state-banner")
            .textContent()
            .catch(() => "")) ?? ""
        ).includes("Disconnected"),
      10_000,
      "disconnected banner",
    );
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-disconnected.png") });
    // A new server on the same port (a new epoch): the page reconnects and gets a full snapshot.
    dash = spawnTidemark(["dashboard", "--port", new URL(url).port, "--nats", nats.url]);
    await dash.ready;
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor({ timeout: 15_000 });
    await waitFor(async () => (await page.getByTestId("state-banner").count()) === 0, 10_000, "banner gone");
    expect(await headline("requests")).toEqual(before);
  });
});
