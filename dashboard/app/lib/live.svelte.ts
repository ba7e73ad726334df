import type { AlertsView } from "../../protocol/alerts.js";
import type { DashboardStatus } from "../../protocol/ws-frames.js";
import type { Connection } from "./dashboard-socket.js";

/** Reactive state the components read; `version` bumps once per animation frame when panes change. */
export const live = $state({
  version: 0,
  status: null as DashboardStatus | null,
  /** Active alerts and their history (the server's `alerts` frame). */
  alerts: null as AlertsView | null,
  connection: "connecting" as Connection,
  detail: "",
  error: null as { code: string; message: string } | null,
  /** Wall clock, ms, ticking once a second (drives live time ranges and ages). */
  now: Date.now(),
});

let pending = false;

/** Coalesces pane changes into one redraw per frame. */
export function panesChanged(): void {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    live.version++;
  });
}
