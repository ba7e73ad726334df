/**
 * The All-services headline in a real browser (docs/websocket-protocol.md, "Pooling services"):
 * with the engine's all-services ("*") panes published, it shows the "*" pane's distinct users
 * (150), not the services' sum (200), and "*" is listed nowhere as a service; a policy without
 * them pools the services as before and says so. Panes published to a real nats-server.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { Pane } from "@tidemark/engine/protocol";
import { ARTIFACTS, launchBrowser } from "./browser.js";
import { pane, publishPanes, startRig, type DashboardRig, type PaneSpec } from "./fixtures.js";

const W = 10_000;
const NEWEST = Math.floor(Date.now() / W) * W - 2 * W;
type Spec = Pick<PaneSpec, "service" | "count" | "errors" | "users" | "p99"> & { policy?: string };
/** Windows 0..5 back from NEWEST, final. */
const windows = (s: Spec): Pane[] =>
  [5, 4, 3, 2, 1, 0].map((k) =>
    pane({ policy: "dashboard", windowMs: W, start: NEWEST - k * W, seq: 0, kind: "final", ...s }),
  );
/** a and b saw 100 distinct users each per window, 50 of them both: the engine's "*" pane says 150. */
const SERVICES: Spec[] = [
  { service: "a", count: 600, errors: 6, users: 100, p99: 300 },
  { service: "b", count: 400, errors: 44, users: 100, p99: 900 },
];
const STAR: Spec = { service: "*", count: 1000, errors: 50, users: 150, p99: 850 };

describe("the All-services headline reads the engine's all-services panes (real browser)", () => {
  let rig: DashboardRig;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    rig = await startRig({}, { stream: true });
    // Under "dashboard" the merge stage ran ("*" panes); under "billing" it did not (an older engine).
    const billing = SERVICES.map((s) => ({ ...s, policy: "billing" }));
    await publishPanes(rig.nc, [...SERVICES, STAR, ...billing].flatMap(windows));
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await rig?.stop();
  });

  const text = async (panel: string, id: string) =>
    ((await page.getByTestId(`panel-${panel}`).getByTestId(id).first().textContent()) ?? "").trim();

  it('shows the "*" pane\'s users and p99, not the sum and the largest; no "*" in the picker or any legend', async () => {
    await page.goto(`${rig.dash.url}/?window=10s&range=15m`);
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor();
    await page.getByTestId("panel-users").getByTestId("scope").filter({ hasText: "merged by the engine" }).waitFor();
    expect([await text("users", "value"), await text("users", "scope"), await text("users", "kind")]).toEqual([
      "150 users",
      "all services, merged by the engine",
      "final",
    ]);
    expect(await text("p99", "value")).toBe("850 ms");
    expect(await text("requests", "value")).toBe("100 req/s");
    expect(await text("errorRate", "value")).toBe("5 %");
    expect(await page.getByTestId("pooled-note").count()).toBe(0);

    // Every per-service legend lists a and b, never "*".
    for (const panel of ["requests", "errorRate", "users", "p50", "p95", "p99"]) {
      const rows = await page.getByTestId(`panel-${panel}`).locator("tbody td.name").allTextContents();
      expect(
        rows.map((r) => r.trim()),
        panel,
      ).toEqual(["a", "b"]);
    }
    await page.getByRole("button", { name: /service/ }).click();
    const options = await page.getByRole("listbox").getByRole("option").allTextContents();
    expect(options.map((o) => o.trim())).toEqual(["All", "a", "b"]);
    await page.keyboard.press("Escape");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-all-services.png"), fullPage: true });
  });

  it("without all-services panes (billing here) pools the services as before, and says so", async () => {
    await page.goto(`${rig.dash.url}/?window=10s&range=15m&policy.users=billing&policy.p99=billing`);
    await page.getByTestId("panel-users").getByTestId("pooled-note").waitFor();
    expect([await text("users", "value"), await text("users", "scope"), await text("users", "pooled-note")]).toEqual([
      "200 users",
      "sum, 2 services",
      "pooled in the browser: users summed, a user of several services counted once per service",
    ]);
    expect([await text("p99", "value"), await text("p99", "pooled-note")]).toEqual([
      "900 ms",
      "pooled in the browser: the largest service's p99, not the p99 of all requests",
    ]);
    // The other panels still read the "*" panes of the dashboard policy.
    expect(await text("requests", "scope")).toBe("all services, merged by the engine");
  });

  it('never lists "*" even when the URL selects it, and a selected service reads its own pane', async () => {
    await page.goto(`${rig.dash.url}/?window=10s&range=15m&services=*,a`);
    await page.getByTestId("panel-users").getByTestId("scope").filter({ hasText: /^a$/ }).waitFor();
    expect(await text("users", "value")).toBe("100 users");
    expect(new URL(page.url()).searchParams.get("services")).toBe("a");
    await page.getByRole("button", { name: /service/ }).click();
    expect((await page.getByRole("listbox").getByRole("option").allTextContents()).map((o) => o.trim())).toEqual([
      "All",
      "a",
      "b",
    ]);
  });
});
