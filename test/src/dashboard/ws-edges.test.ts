/**
 * The WebSocket's edge cases as docs/websocket-protocol.md states them: a `since` from the future
 * or from another epoch gets a full snapshot with `reset: true`; status frames at most one per
 * 500 ms and at least one per 2 s; ping/pong; and the origin rule (own origin, listed origins and
 * clients without Origin pass; any other Origin is HTTP 403 `TM_DASHBOARD_ORIGIN_REJECTED`). An
 * in-process dashboard on a real nats-server, real WebSocket clients.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBJECT_STATUS, type EngineStatusMessage } from "@tidemark/engine/protocol";
import { envConfig, type ServerFrame } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { connectWs, pane, publishPanes, startRig, type DashboardRig } from "./fixtures.js";

const W = 10_000;
const T0 = Math.floor((Date.now() - 10 * 60_000) / W) * W;
const LISTED = ["http://grafana.example:3001", "https://ops.example"];
/** The event-loop delay histogram's sampling period: a timer can be this much later than it saw. */
const LATENESS_RESOLUTION_MS = 10;
const panel = { panel: "p", metric: "requests", policy: "edge", windowMs: W };

describe("dashboard WebSocket edge cases", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startRig(envConfig({ TIDEMARK_DASHBOARD_ORIGINS: LISTED.join(",") }), { stream: true });
    await publishPanes(
      rig.nc,
      [0, 1, 2].map((i) =>
        pane({
          policy: "edge",
          service: "checkout",
          windowMs: W,
          start: T0 + i * W,
          seq: 0,
          kind: "on-time",
          count: i,
        }),
      ),
    );
    await waitFor(
      async () =>
        ((await (await fetch(`${rig.dash.url}/api/panes?policy=edge&window=10s`)).json()) as { panes: unknown[] }).panes
          .length === 3,
      30_000,
      "the three panes stored",
    );
  });
  afterAll(() => rig?.stop());

  async function snapshotFor(since?: { epoch: string; rev: number }) {
    const ws = await connectWs(rig.dash.url);
    const hello = await ws.next("hello");
    ws.send({ type: "subscribe", panels: [panel], ...(since ? { since } : {}) });
    const snap = await ws.next("snapshot");
    await ws.close();
    return { hello, snap, starts: snap.panes.map((e) => e.pane.window.start) };
  }

  it("answers a since from the future or from another epoch with everything and reset: true", async () => {
    const { hello, snap: full, starts } = await snapshotFor();
    expect(full.reset).toBe(true);
    expect(starts).toEqual([T0, T0 + W, T0 + 2 * W]);
    // A valid cursor at the current rev: nothing new, and no reset.
    const current = await snapshotFor({ epoch: hello.epoch, rev: hello.rev });
    expect([current.snap.reset, current.starts]).toEqual([false, []]);
    const future = await snapshotFor({ epoch: hello.epoch, rev: hello.rev + 1000 });
    expect([future.snap.reset, future.starts]).toEqual([true, starts]);
    const otherEpoch = await snapshotFor({ epoch: "an-earlier-server-start", rev: 1 });
    expect([otherEpoch.snap.reset, otherEpoch.starts]).toEqual([true, starts]);
  });

  it("answers ping with pong", async () => {
    const ws = await connectWs(rig.dash.url);
    await ws.next("hello");
    ws.send({ type: "ping" });
    await ws.next("pong");
    expect(ws.frames.filter((f) => f.type === "pong")).toHaveLength(1);
    await ws.close();
  });

  it("sends status on change at most once per 500 ms, and at least once per 2 s when nothing changes", async () => {
    // How late this process's timers ran (the dashboard runs in it): the pace is exact on fake
    // timers (dashboard/server/client-hub.test.ts); here a frame is as late as its timer.
    const lateness = monitorEventLoopDelay({ resolution: LATENESS_RESOLUTION_MS });
    lateness.enable();
    const ws = await connectWs(rig.dash.url);
    await ws.next("hello");
    // A worker reporting every 50 ms: twenty changes a second.
    let logTime = T0;
    const chatty = setInterval(() => rig.nc.publish(SUBJECT_STATUS, JSON.stringify(workerStatus((logTime += 50)))), 50);
    const busyFrom = Date.now();
    const statusFrames = (): Array<Extract<ServerFrame, { type: "status" }>> =>
      ws.frames.filter((f): f is Extract<ServerFrame, { type: "status" }> => f.type === "status");
    // Busy until the server has sent five status frames carrying the chatty worker's log time.
    const busyCount = (): number => statusFrames().filter((f) => (f.status.workers[0]?.logTime ?? 0) > T0).length;
    await waitFor(() => busyCount() >= 5, 20_000, "five status frames while the worker changes");
    clearInterval(chatty);
    const busyTo = Date.now();
    const lastLogTime = logTime;
    // Then nothing changes: until two frames more than 500 ms after the last change (a status at
    // least every 2 s; the worker turns stale after 5 s, one change at most).
    await waitFor(
      () => statusFrames().filter((f) => f.status.serverTime > busyTo + 500).length >= 2,
      20_000,
      "two status frames with nothing changing",
    );
    await ws.close();
    lateness.disable();
    const lateMs = lateness.max / 1e6 + LATENESS_RESOLUTION_MS;

    const status = statusFrames();
    const times = status.map((f) => f.status.serverTime);
    const ctx = `${JSON.stringify(times.map((t) => t - busyFrom))}; timers up to ${lateMs} ms late`;
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    const busy = status.filter((f) => f.status.serverTime <= busyTo);
    // Changes reach clients: the busy phase's frames carry a moving log time, the last one the final value.
    expect(busy.length, ctx).toBeGreaterThanOrEqual(4);
    expect(busy.length, ctx).toBeLessThanOrEqual(Math.floor((busyTo - busyFrom) / 500) + 1);
    expect(new Set(busy.map((f) => f.status.workers[0]?.logTime)).size, ctx).toBe(busy.length);
    expect(status.at(-1)?.status.workers[0]?.logTime, ctx).toBe(lastLogTime);
    // ≥ 500 ms apart (5 ms for clock rounding); ≤ 2 s apart, plus how late the heartbeat's timer ran.
    for (const g of gaps) expect(g, ctx).toBeGreaterThanOrEqual(495);
    for (const g of gaps) expect(g, ctx).toBeLessThanOrEqual(2000 + lateMs);
    expect(times.filter((t) => t > busyTo + 500).length, ctx).toBeGreaterThanOrEqual(2);
  });

  it("lets through its own origin, the listed ones and clients without Origin; refuses any other with 403", async () => {
    for (const origin of [undefined, rig.dash.url, ...LISTED]) {
      const ws = await connectWs(rig.dash.url, origin === undefined ? {} : { origin });
      expect((await ws.next("hello")).type).toBe("hello");
      await ws.close();
    }
    for (const origin of ["http://evil.example", "http://grafana.example:3002", "null"]) {
      const refused = await upgradeRefusal(rig.dash.url, origin);
      expect(refused, origin).toMatchObject({ status: 403, body: { code: "TM_DASHBOARD_ORIGIN_REJECTED" } });
      expect(refused.body.error, origin).toContain("allowedOrigins");
    }
  });
});

function workerStatus(logTime: number): EngineStatusMessage {
  return {
    worker: "engine-edge",
    wallTime: Date.now(),
    logTime,
    pipelineLagMs: Date.now() - logTime,
    partitions: [{ partition: 0, logTime, idle: false, lastSeq: 1 }],
    heldBackBy: null,
    policies: [],
    openWindows: 0,
    stateKeys: 0,
    stateBytes: 0,
    checkpointAgeMs: null,
    eventsTotal: 0,
  };
}

/** The HTTP answer to a WebSocket upgrade the server refuses. */
function upgradeRefusal(
  url: string,
  origin: string,
): Promise<{ status: number; body: { code: string; error: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, "ws") + "/ws", { origin });
    ws.once("open", () => reject(new Error(`origin ${origin} was let through`)));
    ws.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (b: Buffer) => (text += b.toString("utf8")));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { code: string; error: string } }),
      );
    });
    ws.once("error", () => undefined);
  });
}
