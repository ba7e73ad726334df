import type { EngineStatusMessage, Pane } from "@tidemark/engine/protocol";
import type { DashboardStatus, FeedStatus } from "../protocol/ws-frames.js";
import type { DashboardMetrics } from "./metrics.js";
import { StatusBoard } from "./status-board.js";

/**
 * What the dashboard knows about the engines and its own feed (docs/websocket-protocol.md,
 * "Server → client"): the engine status board, the TM_PANES feed's state, and the status view
 * both make with the newest pane per policy. Calls `changed` when clients should hear of it.
 */
export class StatusView {
  private readonly board = new StatusBoard();
  private feed: FeedStatus = { state: "connecting", applied: 0, replayTarget: null, lastSeq: 0, error: null };

  constructor(
    private readonly metrics: DashboardMetrics,
    private readonly newestPanes: () => Map<string, Pane>,
    private readonly changed: () => void,
    private readonly now: () => number = Date.now,
  ) {
    metrics.setFeedState(this.feed.state);
  }

  status(msg: EngineStatusMessage): void {
    this.board.update(msg, this.now());
    this.changed();
  }

  feedChanged(feed: FeedStatus): void {
    const stateChanged = feed.state !== this.feed.state;
    this.feed = { ...feed };
    this.metrics.setFeedState(feed.state);
    if (stateChanged) this.changed();
  }

  view(): DashboardStatus {
    return this.board.view(this.now(), this.feed, this.newestPanes());
  }
}
