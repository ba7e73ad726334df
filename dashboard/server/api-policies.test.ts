import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Fastify, { type FastifyInstance } from "fastify";
import type { EngineStatusMessage } from "@tidemark/engine/protocol";
import {
  testBias,
  testDial,
  testLateness,
  testPolicyStatus,
  testKindBias,
  testWorker,
} from "../protocol/status.fixture.js";
import { apiRoutes } from "./api-routes.js";
import { dashboardMetrics } from "./metrics.js";
import { PaneStore } from "./pane-store.js";
import { StatusView } from "./status-view.js";

const flagged = testLateness({ lateEvents: 300, lateErrors: 27, ratio: 9, z: 12, p: 1e-30, flagged: true });

async function serve(workers: EngineStatusMessage[]): Promise<FastifyInstance> {
  const store = new PaneStore(10);
  const status = new StatusView(
    dashboardMetrics(),
    () => store.newestPerPolicy(),
    () => undefined,
    () => 5000,
  );
  for (const w of workers) status.status(w);
  const app = Fastify();
  apiRoutes(app, store, status);
  await app.ready();
  return app;
}

describe("GET /api/policies", () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await serve([
      testWorker("a", 40, [
        testPolicyStatus("dashboard", {
          bias: testBias(-0.33, 30),
          stages: [
            testKindBias(60_000, "on-time", 2000, testBias(-0.2)),
            testKindBias(60_000, "final", 2000, testBias(-0.21)),
            testKindBias(10_000, "on-time", 2000, testBias(-0.35)),
            testKindBias(10_000, "final", 2000, testBias(-0.33)),
          ],
          services: [
            testDial("checkout", 10_000, testBias(-1.4), testBias(-1.4), flagged),
            testDial("search", 10_000, testBias(0.03), testBias(0.03)),
            testDial("checkout", 60_000, testBias(-1.2), testBias(-1.2), flagged),
          ],
        }),
      ]),
    ]);
  });
  afterAll(() => app.close());

  it("defaults to the smallest window size: the pooled final bias of that size, its services and stages", async () => {
    const res = await app.inject({ url: "/api/policies" });
    expect(res.statusCode).toBe(200);
    const [dashboard] = res.json().policies;
    expect(dashboard).toMatchObject({ name: "dashboard", windowMs: 10_000, source: "status", pipelineLagMs: 40 });
    expect(dashboard.bias.errorRatePp).toBe(-0.33);
    expect(dashboard.bias.stage).toBe("final");
    expect(dashboard.stages.map((s: { stage: string }) => s.stage)).toEqual(["on-time", "final"]);
    expect(dashboard.services).toEqual([
      {
        service: "checkout",
        onTime: { ...testBias(-1.4), stage: "on-time" },
        final: { ...testBias(-1.4), stage: "final" },
        lateness: flagged,
      },
      {
        service: "search",
        onTime: { ...testBias(0.03), stage: "on-time" },
        final: { ...testBias(0.03), stage: "final" },
        lateness: testLateness(),
      },
    ]);
  });

  it("picks the size named by ?window=", async () => {
    const [dashboard] = (await app.inject({ url: "/api/policies?window=60s" })).json().policies;
    expect(dashboard.windowMs).toBe(60_000);
    expect(dashboard.bias.errorRatePp).toBe(-0.21);
    expect(dashboard.services.map((d: { service: string }) => d.service)).toEqual(["checkout"]);
  });

  it("answers 400 naming the parameter for a malformed size or one the engine does not report", async () => {
    const bad = await app.inject({ url: "/api/policies?window=soon" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      code: "TM_DASHBOARD_QUERY_INVALID",
      error: 'query parameter "window" must be a duration such as 10s or 60s, got "soon"',
    });
    const other = await app.inject({ url: "/api/policies?window=30s" });
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toBe('query parameter "window" must be a window size the engine reports: 10s, 60s');
  });

  it("keeps answering for older engines without stages: the policy's bias, no services", async () => {
    const old = await serve([testWorker("a", 40, [testPolicyStatus("dashboard")])]);
    try {
      const [dashboard] = (await old.inject({ url: "/api/policies?window=60s" })).json().policies;
      expect(dashboard).toMatchObject({
        windowMs: 60_000,
        bias: testPolicyStatus("dashboard").bias,
        services: [],
        stages: [],
      });
    } finally {
      await old.close();
    }
  });
});
