import { randomUUID } from "node:crypto";
import type { EngineStatusMessage, Pane } from "@tidemark/engine/protocol";
import type { DashboardConfig } from "./config.js";
import { ClientSession, type ClientSocket } from "./client-session.js";
import { frame } from "./frames.js";
import type { DashboardMetrics } from "./metrics.js";
import { PaneStore } from "./pane-store.js";
import { SessionBook } from "./session-book.js";
import { StatusBoard } from "./status-board.js";
import type { DashboardStatus, FeedStatus } from "../protocol/ws-frames.js";

/** Status frames go out at most this often (engine status comes once a second per worker). */
const STATUS_EVERY_MS = 500;
/** ...and at least this often, so a worker that stopped reporting shows as stale. */
const STATUS_HEARTBEAT_MS = 2000;

/**
 * The dashboard's view of the stream: the pane store, the engine status board and the connected
 * clients. Each stored pane is offered to every client once; duplicates and older seqs stop here.
 */
export class Fanout {
  readonly epoch = randomUUID();
  readonly store: PaneStore;
  /** Session panes folded into per-service session metrics (stored as derived panes). */
  readonly sessionBook: SessionBook;
  private readonly board = new StatusBoard();
  private readonly sessions = new Set<ClientSession>();
  private feed: FeedStatus = { state: "connecting", applied: 0, replayTarget: null, lastSeq: 0, error: null };
  private statusTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly config: DashboardConfig,
    private readonly metrics: DashboardMetrics,
    private readonly now: () => number = Date.now,
  ) {
    this.store = new PaneStore(config.maxWindowsPerSeries, config.maxPanes);
    this.sessionBook = new SessionBook(config.maxWindowsPerSeries, config.discardingPolicies);
    metrics.setFeedState(this.feed.state);
    this.heartbeat = setInterval(() => this.scheduleStatus(), STATUS_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  pane(pane: Pane, json: string): void {
    if (pane.session) {
      for (const d of this.sessionBook.apply(pane)) this.keep(d, JSON.stringify(d));
      return;
    }
    this.keep(pane, json);
  }

  /** Stores a pane (unless an equal or later seq of its id is held) and offers it to the clients. */
  private keep(pane: Pane, json: string): void {
    const stored = this.store.upsert(pane, json);
    if (!stored) {
      this.metrics.panesIgnored.inc();
      return;
    }
    this.metrics.panesApplied.inc();
    this.metrics.storedPanes.set(this.store.size);
    for (const s of this.sessions) s.offer(stored);
  }

  status(msg: EngineStatusMessage): void {
    this.board.update(msg, this.now());
    this.scheduleStatus();
  }

  feedChanged(feed: FeedStatus): void {
    const changed = feed.state !== this.feed.state;
    this.feed = { ...feed };
    this.metrics.setFeedState(feed.state);
    if (changed) this.scheduleStatus();
  }

  get clients(): number {
    return this.sessions.size;
  }

  view(): DashboardStatus {
    return this.board.view(this.now(), this.feed, this.store.newestPerPolicy());
  }

  attach(socket: ClientSocket): ClientSession {
    const session = new ClientSession(socket, this.store, this.epoch, this.config, {
      sent: (frames, panes) => {
        this.metrics.framesSent.inc(frames);
        if (panes > 0) this.metrics.panesSent.inc(panes);
      },
      coalesced: () => this.metrics.earlyCoalesced.inc(),
      dropped: () => this.metrics.earlyDropped.inc(),
      tooSlow: () => this.metrics.slowDisconnects.inc(),
    });
    this.sessions.add(session);
    this.metrics.clients.set(this.sessions.size);
    session.sendControl(frame({ type: "hello", epoch: this.epoch, rev: this.store.rev, status: this.view() }));
    return session;
  }

  detach(session: ClientSession): void {
    session.close();
    this.sessions.delete(session);
    this.metrics.clients.set(this.sessions.size);
  }

  close(): void {
    clearTimeout(this.statusTimer);
    clearInterval(this.heartbeat);
    for (const s of this.sessions) s.close();
    this.sessions.clear();
  }

  private scheduleStatus(): void {
    if (this.statusTimer || this.sessions.size === 0) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      const json = frame({ type: "status", status: this.view() });
      for (const s of this.sessions) s.sendStatus(json);
    }, STATUS_EVERY_MS);
  }
}
