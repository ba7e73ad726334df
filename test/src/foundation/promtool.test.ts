/**
 * Every role's /metrics passes `promtool check metrics` with no warning (docs/operations.md,
 * "Metrics"): engine, ingest and dashboard run as `tidemark <role>` processes against a real
 * nats-server, events go through them so the labelled series exist, and each body is piped into
 * promtool's stdin. Nothing is skipped: without promtool the test fails naming the package.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import { promtoolCheckMetrics } from "../harness/promtool.js";
import { tempDir } from "../engine/engine-fixtures.js";

const PROMTOOL = "promtool";
const TOKEN = "promtool-test-token";

async function metricsOf(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return res.text();
}

describe("promtool check metrics on every role's /metrics", () => {
  let nats: TestNats;
  const roles: CliProcess[] = [];
  const urls: Record<"engine" | "ingest" | "dashboard", string> = { engine: "", ingest: "", dashboard: "" };

  beforeAll(async () => {
    const found = spawnSync(PROMTOOL, ["--version"], { encoding: "utf8" });
    if (found.error || found.status !== 0)
      throw new Error(
        `promtool is not installed: install the Debian package "prometheus" (apt-get install prometheus), ` +
          `or run npm test, whose pretest step (deploy/scripts/setup.mjs --prometheus) does`,
      );
    nats = await startTestNats();
    const dir = tempDir("promtool");
    const data = join(dir, "data");
    const common = ["--nats", nats.url, "--partition-count", "2"];
    // An alert rule and an (unreachable) Alertmanager, so the alert metrics have series too.
    const config = join(dir, "tidemark.config.json");
    const rule = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting", window="10s"} > 0.05' };
    writeFileSync(config, JSON.stringify({ alerts: { alertmanagers: ["http://127.0.0.1:9"], rules: [rule] } }));
    const engine = spawnTidemark(["engine", ...common, "--data", data, "--metrics-port", "0"]);
    const ingest = spawnTidemark(["ingest", ...common, "--port", "0"], { env: { TIDEMARK_INGEST_TOKENS: TOKEN } });
    const dashboard = spawnTidemark(["dashboard", "--nats", nats.url, "--port", "0", "--config", config]);
    roles.push(engine, ingest, dashboard);
    const [e, i, d] = await Promise.all([engine.ready, ingest.ready, dashboard.ready]);
    urls.engine = String((e.engine as { metrics: string }).metrics);
    urls.ingest = `${String(i.ingest)}/metrics`;
    urls.dashboard = `${String(d.dashboard)}/metrics`;

    // Traffic, so that the labelled counters and histograms have series.
    const now = Date.now();
    const events = Array.from({ length: 50 }, (_, k) =>
      JSON.stringify({ ts: now - 3000 + k, service: k % 2 ? "api" : "web", route: "/x", status: k % 7 ? 200 : 503 }),
    );
    const res = await fetch(`${String(i.ingest)}/v1/events`, {
      method: "POST",
      body: events.join("\n"),
      headers: { "content-type": "application/x-ndjson", authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    await waitFor(
      async () => /tidemark_engine_panes_emitted_total\{/.test(await metricsOf(urls.engine)),
      30_000,
      "the engine to emit panes",
    );
  });

  afterAll(async () => {
    for (const r of roles) r.child.kill("SIGTERM");
    await Promise.all(roles.map((r) => r.exited));
    await nats?.stop();
  });

  for (const role of ["engine", "ingest", "dashboard"] as const) {
    it(`${role}: exit 0 and no warning`, async () => {
      const body = await metricsOf(urls[role]);
      expect(body).toContain(`tidemark_${role}_`);
      // The rule's series exist whatever the traffic made it do (random errors may fire it).
      if (role === "dashboard") expect(body).toMatch(/^tidemark_alerts_fired_total\{alertname="HighErrorRate"\} \d+$/m);
      const verdict = await promtoolCheckMetrics(body);
      expect(verdict.output.trim().split("\n").filter(Boolean)).toEqual([]);
      expect(verdict.code).toBe(0);
    });
  }

  it("fails a metrics text that breaks the naming rules (promtool really checks)", async () => {
    const bad = "# HELP x_total a gauge named like a counter\n# TYPE x_total gauge\nx_total 1\n";
    const verdict = await promtoolCheckMetrics(bad);
    expect(verdict.code).not.toBe(0);
    expect(verdict.output).toMatch(/x_total/);
  });
});
