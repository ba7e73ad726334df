import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";
import { panesFrame, snapshotFrame } from "./frames.js";
import { matches, type PaneStore, type StoredPane } from "./pane-store.js";
import { SendQueue, type QueueCounters } from "./send-queue.js";
import type { PanelSubscription, ResumeCursor } from "../protocol/ws-frames.js";

/** The part of a `ws` WebSocket a session uses. */
export interface ClientSocket {
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface SessionCounters extends QueueCounters {
  sent(frames: number, panes: number): void;
  tooSlow(): void;
  /** A frame refused by a limit (docs/security.md, "WebSocket limits"). */
  limited(limit: "panels" | "subscribe_rate"): void;
}

type SessionLimits = Pick<
  DashboardConfig,
  | "sendBufferBytes"
  | "maxQueuedEarly"
  | "maxQueuedFrames"
  | "maxQueuedBytes"
  | "maxPanelsPerClient"
  | "subscribesPerSecond"
>;

/** Close code for a client that fell too far behind; it reconnects and resumes. */
export const CLOSE_TOO_SLOW = 4008;
const OPEN = 1;
const PANES_PER_FRAME = 500;
/** A client may send this many seconds' worth of subscribes at once (a page load subscribes every panel). */
const SUBSCRIBE_BURST_S = 10;

/**
 * One WebSocket client: its panel subscriptions and its outbound queue. Sends while the socket
 * holds less than `sendBufferBytes` unsent; otherwise the queue waits (coalescing early panes)
 * and is retried shortly.
 */
export class ClientSession {
  private readonly panels = new Map<string, PanelSubscription>();
  private readonly queue: SendQueue;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  /** Subscribe frames that may still be taken now (a bucket of SUBSCRIBE_BURST_S seconds' worth, refilled at subscribesPerSecond). */
  private subscribeBudget: number;
  private refilledAt: number;

  constructor(
    private readonly socket: ClientSocket,
    private readonly store: PaneStore,
    private readonly epoch: string,
    private readonly config: SessionLimits,
    private readonly counters: SessionCounters,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new SendQueue(config.maxQueuedEarly, counters);
    this.subscribeBudget = config.subscribesPerSecond * SUBSCRIBE_BURST_S;
    this.refilledAt = now();
  }

  /**
   * Adds or replaces panels and queues a snapshot of what they select. Throws
   * TM_DASHBOARD_LIMIT (nothing changed) past the subscribe rate or the panels per client.
   */
  subscribe(panels: readonly PanelSubscription[], since?: ResumeCursor): void {
    this.takeSubscribe();
    const added = new Set(panels.map((p) => p.panel).filter((id) => !this.panels.has(id))).size;
    if (this.panels.size + added > this.config.maxPanelsPerClient) {
      this.counters.limited("panels");
      throw new DashboardError(
        "TM_DASHBOARD_LIMIT",
        `subscribe refused: at most ${this.config.maxPanelsPerClient} panels per client (maxPanelsPerClient), ${this.panels.size} held and ${added} new; unsubscribe some first`,
      );
    }
    for (const p of panels) this.panels.set(p.panel, p);
    const resume = since !== undefined && since.epoch === this.epoch && since.rev <= this.store.rev;
    const seen = new Set<string>();
    const items: StoredPane[] = [];
    for (const p of panels) {
      for (const s of this.store.select(p, resume ? since.rev : 0)) {
        if (seen.has(s.pane.id)) continue;
        seen.add(s.pane.id);
        items.push(s);
      }
    }
    if (this.queuedPastBytes()) return;
    this.queue.pushFrame(
      snapshotFrame(
        panels.map((p) => p.panel),
        !resume,
        this.store.rev,
        items,
      ),
    );
    this.scheduleOrDrop();
  }

  /** One subscribe from the bucket, refilled continuously. */
  private takeSubscribe(): void {
    const now = this.now();
    const rate = this.config.subscribesPerSecond;
    this.subscribeBudget = Math.min(
      rate * SUBSCRIBE_BURST_S,
      this.subscribeBudget + ((now - this.refilledAt) * rate) / 1000,
    );
    this.refilledAt = now;
    if (this.subscribeBudget >= 1) {
      this.subscribeBudget -= 1;
      return;
    }
    this.counters.limited("subscribe_rate");
    throw new DashboardError(
      "TM_DASHBOARD_LIMIT",
      `subscribe refused: at most ${rate} subscribe frames per second per client after a burst of ${rate * SUBSCRIBE_BURST_S} (subscribesPerSecond); send one frame with every panel`,
    );
  }

  unsubscribe(ids: readonly string[]): void {
    for (const id of ids) this.panels.delete(id);
  }

  /** A pane just stored: queue it when a panel wants it. */
  offer(stored: StoredPane): void {
    for (const p of this.panels.values()) {
      if (!matches(stored.pane, p)) continue;
      if (this.queuedPastBytes()) return;
      this.queue.pushPane(stored);
      this.scheduleOrDrop();
      return;
    }
  }

  sendStatus(json: string): void {
    this.queue.pushStatus(json);
    this.schedule();
  }

  sendControl(json: string): void {
    if (this.queuedPastBytes()) return;
    this.queue.pushFrame(json);
    this.scheduleOrDrop();
  }

  close(): void {
    clearTimeout(this.timer);
    this.panels.clear();
  }

  /**
   * True (and the client dropped) when more than maxQueuedBytes wait unsent, snapshots included:
   * checked before a frame is queued, so one large snapshot on an empty queue always goes out.
   */
  private queuedPastBytes(): boolean {
    if (this.queue.bytes <= this.config.maxQueuedBytes) return false;
    this.dropTooSlow();
    return true;
  }

  /** Past maxQueuedFrames must-deliver items the client is dropped. */
  private scheduleOrDrop(): void {
    if (this.queue.mustDeliver > this.config.maxQueuedFrames) this.dropTooSlow();
    else this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.scheduled = false;
    if (this.socket.readyState !== OPEN) return;
    while (this.queue.length > 0 && this.socket.bufferedAmount < this.config.sendBufferBytes) {
      const next = this.queue.take(PANES_PER_FRAME);
      if (next === undefined) break;
      if (typeof next === "string") {
        this.socket.send(next);
        this.counters.sent(1, 0);
      } else if (next.length > 0) {
        this.socket.send(panesFrame(next));
        this.counters.sent(1, next.length);
      }
    }
    if (this.queue.length > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, 20);
    }
  }

  private dropTooSlow(): void {
    if (this.socket.readyState !== OPEN) return;
    this.counters.tooSlow();
    this.close();
    this.socket.close(CLOSE_TOO_SLOW, "too slow: reconnect and resume");
  }
}
