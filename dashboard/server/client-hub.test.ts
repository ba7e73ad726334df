/**
 * The status frames' pace (docs/websocket-protocol.md, `status`: "on change, ≤ 2/s, and at least
 * every 2 s"), on fake timers so that the bounds are exact: ≥ 500 ms between frames however often
 * the status changes, ≤ 2000 ms between frames whenever the last change came.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DashboardStatus } from "../protocol/ws-frames.js";
import { ClientHub } from "./client-hub.js";
import { resolveConfig } from "./config.js";
import { dashboardMetrics } from "./metrics.js";
import { PaneStore } from "./pane-store.js";

describe("ClientHub status frames", () => {
  let hub: ClientHub;
  /** The fake clock when each status frame a client got was made (its serverTime). */
  let frames: number[];

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    frames = [];
    const view = (): DashboardStatus => ({ serverTime: Date.now() }) as unknown as DashboardStatus;
    hub = new ClientHub(resolveConfig(), new PaneStore(100), dashboardMetrics(), view);
    hub.attach({
      bufferedAmount: 0,
      readyState: 1,
      send: (data: string) => {
        const f = JSON.parse(data) as { type: string; status: { serverTime: number } };
        if (f.type === "status") frames.push(f.status.serverTime);
      },
      close: () => undefined,
    });
  });
  afterEach(() => {
    hub.close();
    vi.useRealTimers();
  });

  const gaps = (): number[] => frames.slice(1).map((t, i) => t - (frames[i] as number));

  it("sends a change within 500 ms, and no two frames less than 500 ms apart however often it changes", async () => {
    const start = Date.now();
    for (let k = 0; k < 100; k++) {
      hub.statusChanged();
      await vi.advanceTimersByTimeAsync(50);
    }
    // The frame made at +5000 ms reaches the socket on the session's next turn.
    await vi.advanceTimersByTimeAsync(1);
    expect(frames[0]).toBe(start + 500);
    expect(frames).toHaveLength(10);
    expect(gaps().every((g) => g === 500)).toBe(true);
  });

  it("sends one every 2000 ms when nothing changes, counted from the last frame whenever the last change came", async () => {
    // Changes until the frame they cause lands 1 ms before what a fixed 2 s heartbeat would have skipped.
    for (const at of [0, 700, 1_999, 2_200, 5_100]) {
      await vi.advanceTimersByTimeAsync(at - (Date.now() - 1_000_000));
      hub.statusChanged();
    }
    await vi.advanceTimersByTimeAsync(10_000);
    const g = gaps();
    expect(g.length).toBeGreaterThanOrEqual(6);
    for (const gap of g) expect(gap).toBeGreaterThanOrEqual(500);
    for (const gap of g) expect(gap).toBeLessThanOrEqual(2000);
    // Once nothing changes any more: exactly every 2000 ms.
    expect(g.slice(-4)).toEqual([2000, 2000, 2000, 2000]);
  });
});
