import type { AlertsView } from "../../protocol/alerts.js";
import type { ClientFrame, DashboardStatus, PanelSubscription, ServerFrame } from "../../protocol/ws-frames.js";
import { PaneBook } from "./pane-book.js";

export type Connection = "connecting" | "open" | "reconnecting";

export interface SocketEvents {
  /** Panes changed (snapshot or live). */
  panes(): void;
  status(s: DashboardStatus): void;
  alerts(a: AlertsView): void;
  connection(c: Connection, detail: string): void;
  error(code: string, message: string): void;
}

/**
 * The app's WebSocket: subscribes the panels, applies snapshots and live panes to a PaneBook,
 * and on reconnect resubscribes with the resume cursor so only what changed is sent again.
 */
export class DashboardSocket {
  readonly book = new PaneBook();
  private ws: WebSocket | undefined;
  private panels = new Map<string, PanelSubscription>();
  private retryMs = 250;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `token`: the read token, sent as the first frame of every connection (docs/websocket-protocol.md, "Auth"). */
  constructor(
    private readonly url: string,
    private readonly token: string | null,
    private readonly events: SocketEvents,
  ) {}

  start(): void {
    this.open("connecting");
  }

  /** Sets the panels; only new or changed ones are (re)subscribed. */
  setPanels(panels: readonly PanelSubscription[]): void {
    const changed = panels.filter((p) => JSON.stringify(this.panels.get(p.panel)) !== JSON.stringify(p));
    const gone = [...this.panels.keys()].filter((id) => !panels.some((p) => p.panel === id));
    this.panels = new Map(panels.map((p) => [p.panel, p]));
    if (gone.length > 0) this.send({ type: "unsubscribe", panels: gone });
    if (changed.length > 0) this.send({ type: "subscribe", panels: changed });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.close();
  }

  private open(state: Connection): void {
    this.events.connection(state, this.url);
    // Offering the `tidemark` protocol lets the token come in the first frame instead of the URL.
    const ws = new WebSocket(this.url, ["tidemark"]);
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 250;
      if (this.token !== null) ws.send(JSON.stringify({ type: "auth", token: this.token }));
      this.events.connection("open", this.url);
      const since = this.book.cursor();
      const panels = [...this.panels.values()];
      if (panels.length > 0) this.send(since ? { type: "subscribe", panels, since } : { type: "subscribe", panels });
    };
    ws.onmessage = (ev: MessageEvent<string>) => this.onFrame(JSON.parse(ev.data) as ServerFrame);
    ws.onclose = (ev: CloseEvent) => {
      if (this.closed) return;
      this.events.connection("reconnecting", ev.reason || `connection closed (${ev.code})`);
      this.timer = setTimeout(() => this.open("reconnecting"), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    };
  }

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case "hello":
        this.book.hello(f.epoch);
        this.events.status(f.status);
        return;
      case "snapshot": {
        if (f.reset) this.book.reset(f.panels.flatMap((id) => this.filterOf(id)));
        this.book.apply(f.panes);
        this.book.noteRev(f.rev);
        this.events.panes();
        return;
      }
      case "panes":
        if (this.book.apply(f.panes) > 0) this.events.panes();
        return;
      case "status":
        this.events.status(f.status);
        return;
      case "alerts":
        this.events.alerts(f.alerts);
        return;
      case "error":
        this.events.error(f.code, f.message);
        return;
      case "pong":
        return;
    }
  }

  private filterOf(id: string) {
    const p = this.panels.get(id);
    return p
      ? [{ policy: p.policy, windowMs: p.windowMs, services: p.services ?? [], sessions: p.metric === "sessions" }]
      : [];
  }

  private send(f: ClientFrame): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(f));
  }
}
