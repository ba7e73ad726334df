import { randomUUID } from "node:crypto";
import type { AlertsView } from "../protocol/alerts.js";
import type { DashboardStatus } from "../protocol/ws-frames.js";
import { ClientSession, type ClientSocket } from "./client-session.js";
import type { DashboardConfig } from "./config.js";
import { DashboardError } from "./errors.js";
import { frame } from "./frames.js";
import type { DashboardMetrics } from "./metrics.js";
import type { PaneStore, StoredPane } from "./pane-store.js";

/** Status frames go out at most this often (engine status comes once a second per worker). */
const STATUS_EVERY_MS = 500;
/** ...and at least this often (counted from the last one sent), so a worker that stopped reporting shows as stale. */
const STATUS_HEARTBEAT_MS = 2000;

/**
 * The connected WebSocket clients (docs/websocket-protocol.md): attaches and detaches sessions,
 * offers each newly stored pane to every one, and sends them the status, throttled.
 */
export class ClientHub {
  readonly epoch = randomUUID();
  private readonly sessions = new Set<ClientSession>();
  /** Open sockets (attached or still authenticating), in all and per remote address. */
  private sockets = 0;
  private readonly perAddress = new Map<string, number>();
  private statusTimer: NodeJS.Timeout | undefined;
  private alertsTimer: NodeJS.Timeout | undefined;
  private alerts: (() => AlertsView) | undefined;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly config: DashboardConfig,
    private readonly store: PaneStore,
    private readonly metrics: DashboardMetrics,
    private readonly view: () => DashboardStatus,
  ) {
    this.heartbeat = setTimeout(() => this.sendStatus(), STATUS_HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  get clients(): number {
    return this.sessions.size;
  }

  /**
   * Takes a connection slot for a socket from `address`, or returns the TM_DASHBOARD_LIMIT error
   * naming the limit (maxClients, maxClientsPerAddress) it would pass. `release` gives it back.
   */
  admit(address: string): DashboardError | undefined {
    const mine = this.perAddress.get(address) ?? 0;
    const limit =
      this.sockets >= this.config.maxClients
        ? ([
            "clients",
            `the server holds its maximum of ${this.config.maxClients} WebSocket clients (maxClients)`,
          ] as const)
        : mine >= this.config.maxClientsPerAddress
          ? ([
              "clients_per_address",
              `this address holds its maximum of ${this.config.maxClientsPerAddress} WebSocket clients (maxClientsPerAddress)`,
            ] as const)
          : undefined;
    if (limit) {
      this.metrics.wsLimited.inc({ limit: limit[0] });
      return new DashboardError("TM_DASHBOARD_LIMIT", `${limit[1]}: close another tab or try again later`);
    }
    this.sockets++;
    this.perAddress.set(address, mine + 1);
    return undefined;
  }

  release(address: string): void {
    this.sockets--;
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(address, left);
    else this.perAddress.delete(address);
  }

  offer(stored: StoredPane): void {
    for (const s of this.sessions) s.offer(stored);
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
      limited: (limit) => this.metrics.wsLimited.inc({ limit }),
    });
    this.sessions.add(session);
    this.metrics.clients.set(this.sessions.size);
    session.sendControl(frame({ type: "hello", epoch: this.epoch, rev: this.store.rev, status: this.view() }));
    if (this.alerts) session.sendControl(frame({ type: "alerts", alerts: this.alerts() }));
    return session;
  }

  /** From now on every client gets an `alerts` frame after hello and when they change. */
  showAlerts(view: () => AlertsView): void {
    this.alerts = view;
  }

  /** Sends an alerts frame within STATUS_EVERY_MS, one for everything that changed meanwhile. */
  alertsChanged(): void {
    if (this.alertsTimer || this.sessions.size === 0 || !this.alerts) return;
    const view = this.alerts;
    this.alertsTimer = setTimeout(() => {
      this.alertsTimer = undefined;
      const json = frame({ type: "alerts", alerts: view() });
      for (const s of this.sessions) s.sendControl(json);
    }, STATUS_EVERY_MS);
  }

  detach(session: ClientSession): void {
    session.close();
    this.sessions.delete(session);
    this.metrics.clients.set(this.sessions.size);
  }

  /** Sends a status frame within STATUS_EVERY_MS, one for everything that changed meanwhile. */
  statusChanged(): void {
    if (this.statusTimer || this.sessions.size === 0) return;
    this.statusTimer = setTimeout(() => this.sendStatus(), STATUS_EVERY_MS);
  }

  /**
   * Sends the status now (a change waiting goes with it) and re-arms the heartbeat: the next frame
   * comes STATUS_HEARTBEAT_MS after this one at the latest (docs/websocket-protocol.md, `status`).
   */
  private sendStatus(): void {
    clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    this.heartbeat.refresh();
    if (this.sessions.size === 0) return;
    const json = frame({ type: "status", status: this.view() });
    for (const s of this.sessions) s.sendStatus(json);
  }

  close(): void {
    clearTimeout(this.statusTimer);
    clearTimeout(this.alertsTimer);
    clearTimeout(this.heartbeat);
    for (const s of this.sessions) s.close();
    this.sessions.clear();
  }
}
