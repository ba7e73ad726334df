import { createConnection } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig, startDashboard } from "@tidemark/dashboard";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { PANE_BODY_VERSION, PaneRecords, panesSubject, type Pane } from "@tidemark/engine/protocol";
import { compressPaneBody } from "@tidemark/engine/nats";
import { waitFor } from "../index.js";
import {
  connectWs,
  createPanesStream,
  pane,
  publishPaneBatch,
  publishPanes,
  publishPanesAround,
  receivedPanes,
  storedPanes,
  startRig,
  type DashboardRig,
} from "./fixtures.js";

const W = 60_000;
const T0 = Math.floor((Date.now() - 30 * 60_000) / W) * W;
const quiet = { logLevel: "warn", retryMs: "100ms" };

async function json<T>(url: string): Promise<T> {
  const res = await fetch(url);
  return (await res.json()) as T;
}

/** The dashboard's count of panes ignored because a same or later seq of the id was held. */
async function panesIgnored(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^tidemark_dashboard_panes_ignored_total (\d+)$/m.exec(text)?.[1]);
}

/** When TM_PANES stored a pane (server time), ms: the last message on its subject. */
async function publishedAt(nc: NatsConnection, p: Pane): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const m = await jsm.streams.getMessage("TM_PANES", {
    last_by_subj: panesSubject(p.policy, p.window.end - p.window.start),
  });
  if (m === null) throw new Error(`TM_PANES holds no pane of ${p.id}`);
  return m.time.getTime();
}

/** Generous: a loaded 2-core machine can be slow, and a wait on a condition costs nothing when it holds. */
const WAIT_MS = 30_000;

describe("dashboard server against a real nats-server", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    // Started before TM_PANES exists: it must wait and say so, not fail.
    rig = await startRig({}, { stream: false });
  });
  afterAll(() => rig?.stop());

  it("waits for a missing TM_PANES, then replays what was published and keeps the newest seq per id", async () => {
    await waitFor(
      async () =>
        (await json<{ feed: { state: string } }>(`${rig.dash.url}/api/status`)).feed.state === "waiting-for-stream",
      WAIT_MS,
      "waiting-for-stream",
    );
    const ws = await connectWs(rig.dash.url);
    await ws.next("hello");
    ws.send({ type: "subscribe", panels: [{ panel: "p1", metric: "requests", policy: "billing", windowMs: W }] });
    await ws.next("snapshot");
    await createPanesStream(rig.nc);
    const a = (seq: number, kind: Pane["kind"], count: number): Pane =>
      pane({ policy: "billing", service: "checkout", windowMs: W, start: T0, seq, kind, count });
    // Newer seq first, then an older seq and a replay of the newer one: neither may overwrite it.
    // The replay goes around JetStream's dedupe (another Nats-Msg-Id), so the dashboard sees it.
    await publishPanes(rig.nc, [a(2, "on-time", 120)]);
    await publishPanes(rig.nc, [a(1, "early", 80)]);
    await publishPanesAround(rig.nc, [a(2, "on-time", 120)], "#replay");
    await publishPanes(rig.nc, [
      pane({ policy: "billing", service: "search", windowMs: W, start: T0, seq: 0, kind: "on-time", count: 7 }),
    ]);
    expect(await storedPanes(rig.nc)).toBe(4);
    await waitFor(
      async () => (await json<{ feed: { state: string } }>(`${rig.dash.url}/api/status`)).feed.state === "live",
      WAIT_MS,
      "live",
    );
    await waitFor(
      async () =>
        (await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=billing&window=60s`)).panes.length === 2,
      WAIT_MS,
      "two panes",
    );
    const { panes } = await json<{ panes: Pane[] }>(
      `${rig.dash.url}/api/panes?policy=billing&window=60s&service=checkout`,
    );
    expect(panes.map((p) => [p.key.service, p.seq, p.value.count])).toEqual([["checkout", 2, 120]]);
    // Both the older seq and the replay were read and ignored, and no client was sent either.
    expect(await panesIgnored(rig.dash.url)).toBe(2);
    await ws.next("panes", (f) => f.panes.some((e) => e.pane.key.service === "search"), WAIT_MS);
    expect(receivedPanes(ws.frames).map((p) => [p.key.service, p.seq, p.value.count])).toEqual([
      ["checkout", 2, 120],
      ["search", 0, 7],
    ]);
    await ws.close();
  });

  it("answers a subscription with a snapshot, then live upserts of matching panes only", async () => {
    const ws = await connectWs(rig.dash.url);
    const hello = await ws.next("hello");
    ws.send({
      type: "subscribe",
      panels: [{ panel: "p1", metric: "requests", policy: "billing", windowMs: W, services: ["checkout"] }],
    });
    const snap = await ws.next("snapshot");
    expect(snap.reset).toBe(true);
    expect(snap.panes.map((e) => [e.pane.key.service, e.pane.seq])).toEqual([["checkout", 2]]);
    await publishPanes(rig.nc, [
      pane({ policy: "billing", service: "checkout", windowMs: W, start: T0 + W, seq: 0, kind: "on-time", count: 33 }),
    ]);
    await publishPanes(rig.nc, [
      pane({ policy: "dashboard", service: "checkout", windowMs: W, start: T0 + W, seq: 0, kind: "early", count: 30 }),
      pane({ policy: "billing", service: "search", windowMs: W, start: T0 + W, seq: 0, kind: "on-time", count: 9 }),
    ]);
    // A matching pane published after the others: once it arrives, the feed (in stream order) has
    // handled the two that do not match, so their absence is not a matter of waiting longer.
    await publishPanes(rig.nc, [
      pane({
        policy: "billing",
        service: "checkout",
        windowMs: W,
        start: T0 + 2 * W,
        seq: 0,
        kind: "on-time",
        count: 34,
      }),
    ]);
    const live = await ws.next("panes");
    await ws.next("panes", (f) => f.panes.some((e) => e.pane.value.count === 34), WAIT_MS);
    expect(
      receivedPanes(ws.frames)
        .slice(1)
        .map((p) => [p.policy, p.key.service, p.value.count]),
    ).toEqual([
      ["billing", "checkout", 33],
      ["billing", "checkout", 34],
    ]);
    expect(live.panes[0]?.rev).toBeGreaterThan(hello.rev);
    await ws.close();
  });

  it("reads a TM_PANES message holding a batch of panes pane by pane, in order, beside single-pane messages", async () => {
    const b = (service: string, seq: number, count: number): Pane =>
      pane({ policy: "batch", service, windowMs: W, start: T0, seq, kind: seq === 0 ? "early" : "on-time", count });
    // One message as the engine writes it: three panes, one of them superseded within the batch.
    await publishPaneBatch(rig.nc, "p3:41:0:tm.panes.batch.60000:0", [
      b("checkout", 0, 5),
      b("search", 0, 6),
      b("checkout", 1, 8),
    ]);
    await publishPanes(rig.nc, [b("cart", 0, 2)]);
    await waitFor(
      async () =>
        (await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=batch&window=60s`)).panes.length === 3,
      WAIT_MS,
      "three batch panes",
    );
    const { panes } = await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=batch&window=60s`);
    expect(panes.map((p) => [p.key.service, p.seq, p.value.count]).sort()).toEqual([
      ["cart", 0, 2],
      ["checkout", 1, 8],
      ["search", 0, 6],
    ]);
  });

  it("reads binary pane bodies, gzipped or not, and skips a body of a newer version without stopping", async () => {
    const b = (service: string, seq: number, count: number): Pane =>
      pane({ policy: "binary", service, windowMs: W, start: T0, seq, kind: seq === 0 ? "early" : "on-time", count });
    const body = (panes: Pane[]): Uint8Array => {
      const w = new PaneRecords();
      for (const p of panes) w.add(p);
      return w.body();
    };
    const js = jetstream(rig.nc);
    const subject = panesSubject("binary", W);
    const send = async (id: string, data: Uint8Array): Promise<void> => {
      const h = headers();
      h.set("Nats-Msg-Id", id);
      await js.publish(subject, data, { headers: h });
    };
    const sent = [b("checkout", 0, 5), b("search", 0, 6), b("cart", 1, 9)];
    await send("bin-0", body(sent.slice(0, 2)));
    const newer = body([b("lost", 0, 1)]);
    newer[4] = PANE_BODY_VERSION + 1;
    await send("bin-newer", newer);
    await send("bin-1", compressPaneBody(body(sent.slice(2))));
    const read = async (): Promise<Pane[]> =>
      (await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=binary&window=60s`)).panes;
    await waitFor(async () => (await read()).length === 3, WAIT_MS, "three binary panes");
    const byService = (ps: Pane[]): Pane[] => [...ps].sort((x, y) => x.key.service.localeCompare(y.key.service));
    expect(byService(await read())).toEqual(byService(sent));
    const metrics = await (await fetch(`${rig.dash.url}/metrics`)).text();
    expect(metrics).toMatch(/^tidemark_dashboard_pane_feed_skipped_total\{what="body"\} 1$/m);
  });

  it("resumes after a reconnect with only what changed, and survives a nats-server restart without duplicates", async () => {
    const panel = { panel: "p1", metric: "requests", policy: "alerting", windowMs: W };
    const ws1 = await connectWs(rig.dash.url);
    const hello = await ws1.next("hello");
    ws1.send({ type: "subscribe", panels: [panel] });
    await publishPanes(rig.nc, [
      pane({ policy: "alerting", service: "checkout", windowMs: W, start: T0, seq: 0, kind: "on-time", count: 50 }),
    ]);
    await ws1.next("panes");
    const cursor = {
      epoch: hello.epoch,
      rev: Math.max(...ws1.frames.flatMap((f) => (f.type === "panes" ? f.panes.map((e) => e.rev) : []))),
    };
    await ws1.close();

    await rig.nats.restart();
    const later = [
      pane({ policy: "alerting", service: "checkout", windowMs: W, start: T0, seq: 1, kind: "late", count: 52 }),
      pane({ policy: "alerting", service: "checkout", windowMs: W, start: T0 + W, seq: 0, kind: "on-time", count: 61 }),
    ];
    // A fresh publisher connection, as an engine restarted with the server would have.
    await rig.reconnect();
    // A client subscribed across the replay below.
    const wsLive = await connectWs(rig.dash.url);
    await wsLive.next("hello");
    wsLive.send({ type: "subscribe", panels: [panel] });
    await wsLive.next("snapshot");
    const ignoredBefore = await panesIgnored(rig.dash.url);
    const storedBefore = await storedPanes(rig.nc);
    await publishPanes(rig.nc, later);
    // The same panes again (an engine replaying after its own restart, whose message ids JetStream
    // no longer dedupes): stored again, read by the dashboard, and absorbed there.
    await publishPanesAround(rig.nc, later, "#after-restart");
    expect(await storedPanes(rig.nc)).toBe(storedBefore + 4);
    await waitFor(
      async () =>
        (await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=alerting&window=60s`)).panes.length === 2,
      WAIT_MS,
      "panes after restart",
    );
    await waitFor(async () => (await panesIgnored(rig.dash.url)) >= ignoredBefore + 2, WAIT_MS, "the replay read");
    expect(await panesIgnored(rig.dash.url)).toBe(ignoredBefore + 2);
    expect(
      receivedPanes(wsLive.frames)
        .filter((p) => p.policy === "alerting")
        .map((p) => [p.window.start, p.seq, p.value.count]),
    ).toEqual([
      [T0, 0, 50],
      [T0, 1, 52],
      [T0 + W, 0, 61],
    ]);
    await wsLive.close();

    const ws2 = await connectWs(rig.dash.url);
    ws2.send({ type: "subscribe", panels: [panel], since: cursor });
    const snap = await ws2.next("snapshot");
    expect(snap.reset).toBe(false);
    expect(snap.panes.map((e) => [e.pane.window.start, e.pane.seq, e.pane.kind])).toEqual([
      [T0, 1, "late"],
      [T0 + W, 0, "on-time"],
    ]);
    await ws2.close();
    const { panes } = await json<{ panes: Pane[] }>(`${rig.dash.url}/api/panes?policy=alerting&window=60s`);
    expect(panes.map((p) => p.value.count)).toEqual([52, 61]);
  });

  it("rejects bad queries, bad frames and foreign origins with a code that names the problem", async () => {
    const res = await fetch(`${rig.dash.url}/api/panes?window=60s`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: "TM_DASHBOARD_QUERY_INVALID",
      error: expect.stringContaining("policy"),
    });
    const badWindow = await fetch(`${rig.dash.url}/api/panes?policy=billing&window=soon`);
    expect(((await badWindow.json()) as { error: string }).error).toContain("window");
    await expect(connectWs(rig.dash.url, { origin: "http://evil.example" })).rejects.toThrow(/403/);
    const ws = await connectWs(rig.dash.url, { origin: rig.dash.url });
    ws.send({ type: "subscribe", panels: [{ panel: "x", metric: "requests", policy: "billing" }] });
    const err = await ws.next("error");
    expect(err).toMatchObject({ code: "TM_DASHBOARD_FRAME_INVALID" });
    expect(err.message).toContain("panels[0].windowMs");
    await ws.close();
    // A taken port is a coded error that says what to do.
    const port = Number(new URL(rig.dash.url).port);
    await expect(startDashboard(resolveConfig({ ...quiet, port, nats: rig.nats.url }))).rejects.toMatchObject({
      code: "TM_DASHBOARD_LISTEN_FAILED",
      message: expect.stringContaining("pick another --port"),
    });
  });

  it("guards the API and the WebSocket with the read token when one is configured", async () => {
    const guarded = await startDashboard(resolveConfig({ ...quiet, port: 0, nats: rig.nats.url, readToken: "s3cret" }));
    try {
      const denied = await fetch(`${guarded.url}/api/status`);
      expect(denied.status).toBe(401);
      expect(await denied.json()).toMatchObject({ code: "TM_DASHBOARD_UNAUTHORIZED" });
      expect((await fetch(`${guarded.url}/api/status`, { headers: { authorization: "Bearer s3cret" } })).status).toBe(
        200,
      );
      await expect(connectWs(guarded.url)).rejects.toThrow(/401/);
      const ws = await connectWs(`${guarded.url}/ws?token=s3cret`);
      await ws.next("hello");
      await ws.close();
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it("replays on start what TM_PANES stored within the replay window, and nothing older", async () => {
    const old = pane({
      policy: "replay",
      service: "checkout",
      windowMs: W,
      start: T0,
      seq: 0,
      kind: "final",
      count: 1,
    });
    const recent = pane({
      policy: "replay",
      service: "checkout",
      windowMs: W,
      start: T0 + W,
      seq: 0,
      kind: "final",
      count: 2,
    });
    // The replay window is measured from the stored publish times, back from the clock the dashboard
    // is given: a window that starts between the two publishes has recent inside and old outside.
    await publishPanes(rig.nc, [old]);
    const oldAt = await publishedAt(rig.nc, old);
    await waitFor(() => Date.now() > oldAt + 2, WAIT_MS, "the clock past the first publish");
    await publishPanes(rig.nc, [recent]);
    const recentAt = await publishedAt(rig.nc, recent);
    expect(recentAt).toBeGreaterThan(oldAt + 1);
    const now = recentAt + 60_000;
    const counts = async (replay: string): Promise<number[]> => {
      const config = resolveConfig({ ...quiet, port: 0, nats: rig.nats.url, replayMs: replay });
      const d = await startDashboard(config, undefined, () => now);
      try {
        await waitFor(
          async () => (await json<{ feed: { state: string } }>(`${d.url}/api/status`)).feed.state === "live",
          WAIT_MS,
          "live",
        );
        return (await json<{ panes: Pane[] }>(`${d.url}/api/panes?policy=replay&window=60s`)).panes.map(
          (p) => p.value.count,
        );
      } finally {
        await d.close();
      }
    };
    expect(await counts(`${now - oldAt - 1}ms`)).toEqual([2]);
    expect(await counts("1h")).toEqual([1, 2]);
  });

  it("closes within its bound while a client holds a connection in the middle of a request", async () => {
    const d = await startDashboard(resolveConfig({ ...quiet, port: 0, nats: rig.nats.url }));
    const { hostname, port } = new URL(d.url);
    // Headers never finished: the server can neither answer nor treat the connection as idle.
    const socket = createConnection({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    socket.write("GET /api/status HTTP/1.1\r\nHost: x\r\n");
    const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    const t0 = Date.now();
    await d.close();
    const took = Date.now() - t0;
    await ended;
    // The close waits 3 s for the connection, then cuts it (server.ts, CLOSE_WAIT_MS).
    expect(took).toBeGreaterThanOrEqual(2_500);
    expect(took).toBeLessThan(10_000);
    expect(socket.destroyed).toBe(true);
  });
});
