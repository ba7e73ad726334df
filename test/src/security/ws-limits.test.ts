/**
 * Bounded WebSocket clients (docs/security.md, "WebSocket limits"): connections per address and
 * in total, panels per client, subscribe rate, and queued bytes with snapshot frames counted, each
 * answered with an error frame or close code naming the limit and counted in /metrics. A real
 * nats-server, a real dashboard server, real sockets.
 */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ServerFrame } from "@tidemark/dashboard";
import { waitFor } from "../index.js";
import { connectWs, pane, publishPanes, startRig, type DashboardRig } from "../dashboard/fixtures.js";

const W = 60_000;
const T0 = Math.floor((Date.now() - 30 * 60_000) / W) * W;

async function metric(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(line.exec(text)?.[1] ?? NaN);
}

/** Opens a socket from `localAddress`; resolves with its first frame and its close code. */
function openFrom(url: string, localAddress: string): Promise<{ first: ServerFrame; closed: Promise<number> }> {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/ws`, { localAddress });
  const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
  return new Promise((resolve, reject) => {
    ws.once("error", reject);
    ws.once("message", (d: Buffer) => resolve({ first: JSON.parse(d.toString("utf8")) as ServerFrame, closed }));
  });
}

const panel = (id: string) => ({ panel: id, metric: "requests", policy: "limits", windowMs: W });

describe("WebSocket limits", () => {
  let rig: DashboardRig | undefined;
  afterEach(async () => {
    await rig?.stop();
    rig = undefined;
  });

  it("caps connections per address and in total, with close 1013 and a frame naming the limit", async () => {
    rig = await startRig({ maxClients: 3, maxClientsPerAddress: 2 }, { stream: true });
    const url = rig.dash.url;
    const held = [await openFrom(url, "127.0.0.1"), await openFrom(url, "127.0.0.1")];
    const sameAddress = await openFrom(url, "127.0.0.1");
    expect(sameAddress.first).toMatchObject({ type: "error", code: "TM_DASHBOARD_LIMIT" });
    expect((sameAddress.first as { message: string }).message).toContain(
      "maximum of 2 WebSocket clients (maxClientsPerAddress)",
    );
    expect(await sameAddress.closed).toBe(1013);
    held.push(await openFrom(url, "127.0.0.2"));
    for (const h of held) expect(h.first.type).toBe("hello");
    const full = await openFrom(url, "127.0.0.3");
    expect((full.first as { message: string }).message).toContain("maximum of 3 WebSocket clients (maxClients)");
    expect(await full.closed).toBe(1013);
    expect(await metric(url, /^tidemark_dashboard_ws_limited_total\{limit="clients_per_address"\} (\d+)$/m)).toBe(1);
    expect(await metric(url, /^tidemark_dashboard_ws_limited_total\{limit="clients"\} (\d+)$/m)).toBe(1);
  });

  it("caps panels per client and subscribe frames per second, answering error frames and keeping the socket", async () => {
    rig = await startRig({ maxPanelsPerClient: 4, subscribesPerSecond: 1 }, { stream: true });
    const ws = await connectWs(rig.dash.url);
    await ws.next("hello");
    ws.send({ type: "subscribe", panels: [panel("a"), panel("b"), panel("c")] });
    await ws.next("snapshot");
    ws.send({ type: "subscribe", panels: [panel("d"), panel("e")] });
    const refused = await ws.next("error");
    expect(refused.code).toBe("TM_DASHBOARD_LIMIT");
    expect(refused.message).toContain("at most 4 panels per client (maxPanelsPerClient), 3 held and 2 new");
    // Replacing held panels and adding one up to the cap is fine.
    ws.send({ type: "subscribe", panels: [panel("a"), panel("d")] });
    await waitFor(() => ws.frames.filter((f) => f.type === "snapshot").length === 2, 10_000, "the second snapshot");
    // A bucket of 10 s at 1/s, three frames taken (the refused one too): a burst of 20 gets 7 (or a refill more) through.
    const started = Date.now();
    for (let i = 0; i < 20; i++) ws.send({ type: "subscribe", panels: [panel("a")] });
    await waitFor(
      () => ws.frames.filter((f) => f.type === "snapshot" || f.type === "error").length === 23,
      10_000,
      "an answer to every subscribe",
    );
    const elapsedS = (Date.now() - started) / 1000;
    const through = ws.frames.filter((f) => f.type === "snapshot").length - 2;
    expect(through).toBeGreaterThanOrEqual(7);
    expect(through).toBeLessThanOrEqual(7 + Math.ceil(elapsedS));
    const rateErrors = ws.frames.filter(
      (f): f is Extract<ServerFrame, { type: "error" }> =>
        f.type === "error" && f.message.includes("subscribesPerSecond"),
    );
    expect(rateErrors).toHaveLength(20 - through);
    ws.send({ type: "ping" });
    await ws.next("pong");
    expect(await metric(rig.dash.url, /^tidemark_dashboard_ws_limited_total\{limit="panels"\} (\d+)$/m)).toBe(1);
    expect(await metric(rig.dash.url, /^tidemark_dashboard_ws_limited_total\{limit="subscribe_rate"\} (\d+)$/m)).toBe(
      20 - through,
    );
    await ws.close();
  });

  it("drops a client that never reads once its queued bytes pass maxQueuedBytes, snapshots included", async () => {
    rig = await startRig(
      { maxQueuedBytes: 1024 * 1024, sendBufferBytes: 1024, subscribesPerSecond: 10_000 },
      { stream: true },
    );
    const panes = Array.from({ length: 400 }, (_, i) =>
      pane({ policy: "limits", service: `svc-${i}`, windowMs: W, start: T0, seq: 0, kind: "final", count: i }),
    );
    await publishPanes(rig.nc, panes);
    await waitFor(
      async () => (await metric(rig!.dash.url, /^tidemark_dashboard_stored_panes (\d+)$/m)) === 400,
      30_000,
      "every pane stored",
    );
    const ws = await connectWs(rig.dash.url);
    await ws.next("hello");
    ws.send({ type: "subscribe", panels: [panel("all")] });
    const first = await ws.next("snapshot", (f) => f.panes.length === 400);
    const snapshotBytes = JSON.stringify(first).length;
    ws.ws.pause();
    const closed = new Promise<number>((r) => ws.ws.once("close", (code) => r(code)));
    // Enough snapshots to fill the kernel's socket buffers many times over, then the queue.
    const subscribes = Math.ceil((64 * 1024 * 1024) / snapshotBytes);
    for (let i = 0; i < subscribes; i++) ws.send({ type: "subscribe", panels: [panel("all")] });
    await waitFor(
      async () => (await metric(rig!.dash.url, /^tidemark_dashboard_slow_client_disconnects_total (\d+)$/m)) === 1,
      30_000,
      "the slow client dropped",
    );
    ws.ws.resume();
    expect(await closed).toBe(4008);
  });
});
