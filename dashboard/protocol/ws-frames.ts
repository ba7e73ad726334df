/**
 * Frames of the dashboard WebSocket protocol (docs/websocket-protocol.md). The server and the
 * Svelte app are the only two ends; both import this module (dashboard/protocol holds what they
 * share, and imports nothing of either). Pane and status bodies are the wire types of
 * `@tidemark/engine/protocol`.
 */
import type { EngineStatusMessage, Pane, PaneBias, ServiceDial, StageBias } from "@tidemark/engine/protocol";
import type { AlertsView } from "./alerts.js";

/** `sessions` selects the session panes (docs/websocket-protocol.md, "Sessions"); the others, window panes. */
export type MetricName = "requests" | "errorRate" | "latency" | "users" | "sessions";

/** What one dashboard panel wants: panes of one policy and window size, some services. */
export interface PanelSubscription {
  /** Client-chosen panel id; subscribing the same id again replaces its filter. */
  panel: string;
  metric: MetricName;
  policy: string;
  /** Window size, ms. */
  windowMs: number;
  /** Services to include; absent or empty = every service. */
  services?: string[];
  /** A route, or absent for service-level panes (panes whose key has no route). */
  route?: string;
  /** Only windows that end at or after this (ms); absent = all kept. */
  from?: number;
}

/** Where a client left off: the server's epoch and the highest `rev` it received. */
export interface ResumeCursor {
  epoch: string;
  rev: number;
}

export type ClientFrame =
  | { type: "subscribe"; panels: PanelSubscription[]; since?: ResumeCursor }
  | { type: "unsubscribe"; panels: string[] }
  | { type: "ping" };

/** A stored pane with the store revision at which it was last upserted. */
export interface PaneEnvelope {
  rev: number;
  pane: Pane;
}

export type FeedState = "connecting" | "waiting-for-stream" | "replaying" | "live" | "disconnected";

export interface FeedStatus {
  state: FeedState;
  /** Panes applied from TM_PANES since start (replay included). */
  applied: number;
  /** Stream sequence the replay must reach before the feed is live; null when not known yet. */
  replayTarget: number | null;
  /** Last stream sequence consumed. */
  lastSeq: number;
  error: string | null;
}

/** One point of the frontier: what a policy costs (emit delay) against what it gets wrong (bias). */
export interface FrontierPoint {
  policy: string;
  label: string;
  strategy: string;
  graceMs: number | null;
  /** Mean emit delay in log time (policy), ms. */
  emitDelayMs: number | null;
  /** Measured pipeline lag (wall clock at emit − log time), ms. */
  pipelineLagMs: number | null;
  /** The policy's bias as the engine status reports it (its pooled final bias), pooled over workers. */
  bias: PaneBias;
  /** "status" when from engine status messages, "panes" when only panes were seen. */
  source: "status" | "panes";
  /** Pooled bias per (window size, pane kind (`stage` on the wire)[, age]), pooled over workers; empty from older engines. */
  stages: StageBias[];
  /** Per (service, window size): on-time and final bias and the lateness correlation, pooled over workers. */
  services: ServiceDial[];
}

/**
 * An engine worker's status as the dashboard forwards it: its policies without `stages` and
 * `services` (those are pooled over workers into `DashboardStatus.frontier`).
 */
export interface WorkerStatus extends EngineStatusMessage {
  /** Wall clock when the dashboard received it, ms. */
  receivedAt: number;
  /** True when no status came from this worker for 5 s. */
  stale: boolean;
}

export interface DashboardStatus {
  serverTime: number;
  feed: FeedStatus;
  workers: WorkerStatus[];
  frontier: FrontierPoint[];
}

export type ServerFrame =
  | { type: "hello"; epoch: string; rev: number; status: DashboardStatus }
  | { type: "snapshot"; panels: string[]; reset: boolean; rev: number; panes: PaneEnvelope[] }
  | { type: "panes"; panes: PaneEnvelope[] }
  | { type: "status"; status: DashboardStatus }
  | { type: "alerts"; alerts: AlertsView }
  | { type: "pong" }
  | { type: "error"; code: string; message: string };
