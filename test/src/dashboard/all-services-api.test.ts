/**
 * The engine's all-services ("*") panes through the dashboard's HTTP APIs
 * (docs/decisions/0030-all-services-panes-in-the-dashboard.md): `/api/panes?service=*` answers
 * them, `service=a,b` still the two services; the Prometheus API serves them as `tidemark_all_*`
 * without a service label, never under the service-level names
 * (docs/decisions/0037-prometheus-data-model.md). An in-process dashboard on a real nats-server,
 * panes published as the engine does, real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { waitFor } from "../index.js";
import { pane, publishPanes, startRig, type DashboardRig, type PaneSpec } from "./fixtures.js";

const W = 10_000;
const T0 = Math.floor((Date.now() - 5 * 60_000) / W) * W;
type Spec = Pick<PaneSpec, "service" | "count" | "users">;
const p = (s: Spec): Pane => pane({ policy: "dashboard", windowMs: W, start: T0, seq: 0, kind: "final", ...s });
/** a and b saw 100 distinct users each, 50 of them both: the engine's "*" pane says 150. */
const PANES = [
  p({ service: "a", count: 600, users: 100 }),
  p({ service: "b", count: 400, users: 100 }),
  p({ service: "*", count: 1000, users: 150 }),
];

describe('the all-services ("*") panes over REST and the Prometheus API', () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startRig({}, { stream: true });
    await publishPanes(rig.nc, PANES);
    await waitFor(async () => (await services("")).length === 3, 30_000, "the panes stored");
  });
  afterAll(() => rig?.stop());

  async function get(path: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${rig.dash.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  }
  /** [service, users] of what /api/panes answers. */
  async function services(query: string): Promise<Array<[string, number]>> {
    const body = await get(`/api/panes?policy=dashboard&window=10s${query}`);
    return (body["panes"] as Pane[]).map((x) => [x.key.service, x.value.users]);
  }
  /** [service label, value] of an instant query at the window's end. */
  async function prom(q: string): Promise<Array<[string | null, number]>> {
    const body = await get(`/api/v1/query?query=${encodeURIComponent(q)}&time=${(T0 + W) / 1000}`);
    const result = (body["data"] as { result: Array<{ metric: Record<string, string>; value: [number, string] }> })
      .result;
    return result.map((r) => [r.metric["service"] ?? null, Number(r.value[1])]);
  }

  it("/api/panes?service=* answers the all-services panes; service=a,b still the two; no service every pane", async () => {
    expect(await services("&service=*")).toEqual([["*", 150]]);
    expect(await services(`&service=${encodeURIComponent("*")}`)).toEqual([["*", 150]]);
    expect((await services("&service=a,b")).sort()).toEqual([
      ["a", 100],
      ["b", 100],
    ]);
    expect((await services("&service=a,*")).sort()).toEqual([
      ["*", 150],
      ["a", 100],
    ]);
    expect((await services("")).map(([s]) => s).sort()).toEqual(["*", "a", "b"]);
  });

  it("the Prometheus API serves them as tidemark_all_* without a service label, never as a service", async () => {
    expect((await prom("tidemark_users")).sort()).toEqual([
      ["a", 100],
      ["b", 100],
    ]);
    expect(await prom("sum(tidemark_requests)")).toEqual([[null, 1000]]);
    expect(await prom("tidemark_all_users")).toEqual([[null, 150]]);
    expect(await prom("sum(tidemark_all_requests)")).toEqual([[null, 1000]]);
    expect(await prom('tidemark_users{service="*"}')).toEqual([]);
    const values = await get("/api/v1/label/service/values");
    expect(values["data"]).toEqual(["a", "b"]);
    const asked = await get(`/api/v1/label/service/values?match[]=${encodeURIComponent("tidemark_all_users")}`);
    expect(asked["data"]).toEqual([]);
    const series = await get(`/api/v1/series?match[]=${encodeURIComponent("tidemark_all_users")}`);
    expect(series["data"]).toEqual([
      { __name__: "tidemark_all_users", pane_kind: "final", policy: "dashboard", window: "10s" },
    ]);
  });
});
