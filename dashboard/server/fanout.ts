import type { DashboardConfig } from "./config.js";
import { ClientHub } from "./client-hub.js";
import type { DashboardMetrics } from "./metrics.js";
import type { FeedSink } from "./pane-feed.js";
import { PaneIntake } from "./pane-intake.js";
import type { PaneStore } from "./pane-store.js";
import { StatusView } from "./status-view.js";

/**
 * The dashboard's view of the stream, wired: the feed's panes go into the intake (store and
 * session book) and every newly stored one out to the client hub; engine status and feed state
 * go into the status view, which tells the hub when to send a status frame.
 */
export interface Fanout {
  /** Where the pane feed delivers. */
  readonly sink: FeedSink;
  readonly store: PaneStore;
  readonly status: StatusView;
  readonly hub: ClientHub;
  close(): void;
}

export function createFanout(config: DashboardConfig, metrics: DashboardMetrics, now: () => number = Date.now): Fanout {
  const intake = new PaneIntake(config, metrics, (stored) => hub.offer(stored));
  const status = new StatusView(
    metrics,
    () => intake.store.newestPerPolicy(),
    () => hub.statusChanged(),
    now,
  );
  const hub: ClientHub = new ClientHub(config, intake.store, metrics, () => status.view());
  return {
    sink: {
      pane: (pane, json) => intake.pane(pane, json),
      status: (msg) => status.status(msg),
      feedChanged: (feed) => status.feedChanged(feed),
    },
    store: intake.store,
    status,
    hub,
    close: () => hub.close(),
  };
}
