import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { waitFor } from "../index.js";
import { connectWs, pane, publishPanes, receivedPanes, startRig, type DashboardRig } from "./fixtures.js";

const W = 10_000;
const T0 = Math.floor((Date.now() - 20 * 60_000) / W) * W;
const IDS = 150;
const EARLY = 30;
/** Long routes make each pane ~1.5 KB, so the panes far exceed what loopback socket buffers absorb (~4 MB here). */
const route = (i: number): string => `/r/${i}/${"x".repeat(1000)}`;

/** A final pane of the next window: published after all the others. */
const SENTINEL = {
  policy: "alerting",
  service: "svc-0",
  windowMs: W,
  start: T0 + W,
  seq: 0,
  kind: "final",
  count: 1,
} as const;

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : NaN;
}

describe("a slow WebSocket client", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startRig({ sendBufferBytes: 4096, maxQueuedEarly: 1000 }, { stream: true });
  });
  afterAll(() => rig?.stop());

  it(
    "gets early panes coalesced but every on-time, late and final pane exactly once, in seq order",
    { timeout: 180_000 },
    async () => {
      const ws = await connectWs(rig.dash.url);
      ws.send({ type: "subscribe", panels: [{ panel: "rate", metric: "requests", policy: "alerting", windowMs: W }] });
      await ws.next("snapshot");

      const all: Pane[] = [];
      const spec = (i: number, seq: number, kind: Pane["kind"]): Pane =>
        pane({
          policy: "alerting",
          service: `svc-${i % 10}`,
          route: route(i),
          windowMs: W,
          start: T0,
          seq,
          kind,
          count: seq + 1,
        });
      for (let seq = 0; seq < EARLY; seq++) all.push(...Array.from({ length: IDS }, (_, i) => spec(i, seq, "early")));
      for (const [k, kind] of (["on-time", "late", "final"] as const).entries())
        all.push(...Array.from({ length: IDS }, (_, i) => spec(i, EARLY + k, kind)));
      // Subscribed to service-level panes only at first; widen the panel to these routed panes, and
      // publish only once the server answered every subscription (its snapshot frame), so no pane can
      // come before the panel that selects it.
      ws.send({ type: "unsubscribe", panels: ["rate"] });
      for (let i = 0; i < IDS; i++)
        ws.send({
          type: "subscribe",
          panels: [{ panel: `r${i}`, metric: "requests", policy: "alerting", windowMs: W, route: route(i) }],
        });
      await waitFor(() => ws.frames.filter((f) => f.type === "snapshot").length === IDS + 1, 60_000, "every snapshot");
      // Stop reading: the server's socket buffer fills and panes queue up for this client.
      ws.ws.pause();
      for (let at = 0; at < all.length; at += 500) await publishPanes(rig.nc, all.slice(at, at + 500));
      // Last, a must-deliver pane of another window: once it arrives, everything queued before it has.
      const sentinel = pane({ ...SENTINEL, route: route(0) });
      await publishPanes(rig.nc, [sentinel]);
      await waitFor(() => rig.dash.fanout.store.rev >= all.length + 1, 60_000, "every pane stored");

      ws.ws.resume();
      await waitFor(
        () => receivedPanes(ws.frames).some((p) => p.id === sentinel.id),
        60_000,
        "the last pane delivered",
      );

      const got = receivedPanes(ws.frames).filter((p) => p.id !== sentinel.id);
      const byId = new Map<string, Pane[]>();
      for (const p of got) byId.set(p.id, [...(byId.get(p.id) ?? []), p]);
      expect(byId.size).toBe(IDS);
      for (const list of byId.values()) {
        const mustDeliver = list.filter((p) => p.kind !== "early").map((p) => `${p.seq}:${p.kind}`);
        expect(mustDeliver).toEqual([`${EARLY}:on-time`, `${EARLY + 1}:late`, `${EARLY + 2}:final`]);
        const seqs = list.map((p) => p.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      }
      const earlyReceived = got.filter((p) => p.kind === "early").length;
      const text = await (await fetch(`${rig.dash.url}/metrics`)).text();
      const coalesced = metric(text, "tidemark_dashboard_early_panes_coalesced_total");
      const dropped = metric(text, "tidemark_dashboard_early_panes_dropped_total");
      expect(earlyReceived).toBeLessThan(IDS * EARLY);
      expect(coalesced + dropped).toBe(IDS * EARLY - earlyReceived);
      expect(coalesced).toBeGreaterThan(0);
      console.log(
        `slow client: ${IDS * EARLY} early panes published, ${earlyReceived} delivered, ${coalesced} coalesced, ${dropped} dropped`,
      );
      await ws.close();
    },
  );
});

describe("a client too slow for the must-deliver panes", () => {
  let rig: DashboardRig;

  beforeAll(async () => {
    rig = await startRig({ sendBufferBytes: 4096, maxQueuedFrames: 100 }, { stream: true });
  });
  afterAll(() => rig?.stop());

  it(
    "is closed with 4008 and, resuming with its cursor, gets the latest of what it missed and nothing twice",
    { timeout: 180_000 },
    async () => {
      const panel = { panel: "rate", metric: "requests", policy: "billing", windowMs: W };
      const ws = await connectWs(rig.dash.url);
      const hello = await ws.next("hello");
      ws.send({ type: "subscribe", panels: [panel] });
      await ws.next("snapshot");
      ws.ws.pause();
      const closed = new Promise<number>((resolve) => ws.ws.once("close", (code) => resolve(code)));
      // Long service names: ~2.5 KB panes, far more than the socket buffers hold.
      const service = (i: number): string => `svc-${i}-${"y".repeat(1000)}`;
      const all: Pane[] = [];
      for (let seq = 0; seq < 20; seq++)
        all.push(
          ...Array.from({ length: 100 }, (_, i) =>
            pane({
              policy: "billing",
              service: service(i),
              windowMs: W,
              start: T0,
              seq,
              kind: seq === 0 ? "on-time" : "late",
              count: seq,
            }),
          ),
        );
      for (let at = 0; at < all.length; at += 500) await publishPanes(rig.nc, all.slice(at, at + 500));
      await waitFor(() => rig.dash.fanout.store.rev >= all.length, 60_000, "every pane stored");
      ws.ws.resume();
      expect(await closed).toBe(4008);

      const first = ws.frames.flatMap((f) => (f.type === "panes" || f.type === "snapshot" ? f.panes : []));
      // The cursor as the app keeps it (pane-book.ts): the newest rev of a snapshot or pane seen. The
      // client may be closed before any panes frame reached it: then the first snapshot's rev is it.
      const revs = ws.frames.flatMap((f) =>
        f.type === "snapshot"
          ? [f.rev, ...f.panes.map((e) => e.rev)]
          : f.type === "panes"
            ? f.panes.map((e) => e.rev)
            : [],
      );
      const cursor = { epoch: hello.epoch, rev: Math.max(...revs) };
      const ws2 = await connectWs(rig.dash.url);
      ws2.send({ type: "subscribe", panels: [panel], since: cursor });
      const resumed = (await ws2.next("snapshot")).panes;
      await ws2.close();

      const seen = [...first, ...resumed].map((e) => `${e.pane.id}#${e.pane.seq}`);
      expect(new Set(seen).size).toBe(seen.length);
      const latest = new Map<string, number>();
      for (const e of [...first, ...resumed]) latest.set(e.pane.id, Math.max(latest.get(e.pane.id) ?? -1, e.pane.seq));
      expect(latest.size).toBe(100);
      expect([...latest.values()].every((seq) => seq === 19)).toBe(true);
      expect(resumed.length).toBeGreaterThan(0);
      const text = await (await fetch(`${rig.dash.url}/metrics`)).text();
      expect(metric(text, "tidemark_dashboard_slow_client_disconnects_total")).toBe(1);
    },
  );
});
