/**
 * The dashboard page in a real browser (Debian's chromium) under its content security policy,
 * with a read token given as `#token=` (docs/security.md): the app runs with no CSP violation,
 * streams over its WebSocket (token in the first frame), and the token leaves the address bar.
 * The built CLI, a real nats-server, panes in TM_PANES.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnTidemark, startTestNats, type CliProcess, type TestNats } from "../index.js";
import { launchBrowser } from "../dashboard/browser.js";
import { createPanesStream, pane, publishPanes } from "../dashboard/fixtures.js";

const TOKEN = "browser-read-token-31d8";

describe("the dashboard page under its CSP, with the read token out of the URL", () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let dash: CliProcess;
  let url: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url, noAsyncTraces: true });
    await createPanesStream(nc);
    const start = Math.floor((Date.now() - 60_000) / 10_000) * 10_000;
    await publishPanes(nc, [
      pane({ policy: "dashboard", service: "checkout", windowMs: 10_000, start, seq: 0, kind: "early", count: 1230 }),
    ]);
    dash = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url], {
      env: { TIDEMARK_DASHBOARD_TOKEN: TOKEN },
    });
    url = String((await dash.ready).dashboard);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    dash?.child.kill("SIGTERM");
    await dash?.exited;
    await nc?.close();
    await nats?.stop();
  });

  it("runs and streams with no CSP violation, the token only in the tab's storage", async () => {
    const refused: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    // Run in the page (a string: this package has no DOM types): every violation goes to the console.
    await page.addInitScript(
      `document.addEventListener("securitypolicyviolation", (e) => console.error("Refused to load: CSP " + e.violatedDirective + " " + e.blockedURI))`,
    );
    const res = await page.goto(`${url}/?services=checkout&window=10s&range=15m#token=${TOKEN}`);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor({ timeout: 30_000 });
    await page.getByTestId("panel-requests").getByTestId("kind").filter({ hasText: "early" }).waitFor();
    expect(page.url()).not.toContain(TOKEN);
    expect(page.url()).toContain("services=checkout");
    expect(await page.evaluate(`sessionStorage.getItem("tidemark.readToken")`)).toBe(TOKEN);
    // A reload keeps streaming from the stored token, the URL still without it.
    await page.reload();
    await page.getByTestId("connection").filter({ hasText: "Streaming" }).waitFor({ timeout: 30_000 });
    expect(page.url()).not.toContain(TOKEN);
    expect(refused).toEqual([]);
    // The server never saw the token in a URL.
    expect(dash.output()).not.toContain(TOKEN);
  });
});
