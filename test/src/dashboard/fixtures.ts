import { headers, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { ensureStream, panesStreamSpec } from "@tidemark/engine/nats";
import { encodePaneBatch, panesSubject, type Pane, type PaneKind } from "@tidemark/engine/protocol";
import { keyIdOf } from "@tidemark/engine/core";
import WebSocket from "ws";
import {
  resolveConfig,
  startDashboard,
  type DashboardConfigInput,
  type DashboardServer,
  type ServerFrame,
} from "@tidemark/dashboard";
import { connect } from "@nats-io/transport-node";
import { startTestNats, type TestNats } from "../index.js";

/** Creates TM_PANES exactly as the engine runtime does. */
export async function createPanesStream(nc: NatsConnection): Promise<void> {
  await ensureStream(await jetstreamManager(nc), panesStreamSpec());
}

export interface PaneSpec {
  policy: string;
  service: string;
  route?: string;
  windowMs: number;
  start: number;
  seq: number;
  kind: PaneKind;
  count: number;
  errors?: number;
  p50?: number;
  p95?: number;
  p99?: number;
  users?: number;
  emitDelayMs?: number;
  pipelineLagMs?: number;
  bias?: Partial<Pane["bias"]>;
}

/** A Pane exactly as the engine publishes it (engine/src/protocol.ts). */
export function pane(s: PaneSpec): Pane {
  const errors = s.errors ?? 0;
  const end = s.start + s.windowMs;
  const emitDelayMs = s.emitDelayMs ?? 2000;
  return {
    id: `${s.policy}|${keyIdOf(s.service, s.route)}|${s.windowMs}|${s.start}`,
    seq: s.seq,
    kind: s.kind,
    policy: s.policy,
    key: s.route === undefined ? { service: s.service } : { service: s.service, route: s.route },
    window: { start: s.start, end },
    value: {
      count: s.count,
      errors,
      errorRate: s.count === 0 ? 0 : errors / s.count,
      p50: s.p50 ?? 20,
      p90: 80,
      p95: s.p95 ?? 120,
      p99: s.p99 ?? 250,
      p999: 400,
      users: s.users ?? 10,
    },
    watermark: end + emitDelayMs - 2000,
    emittedAt: end + emitDelayMs,
    emitDelayMs,
    pipelineLagMs: s.pipelineLagMs ?? 40,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: null, errorRatePp: null, p99Pct: null, usersPct: null, windows: 0, ...s.bias },
  };
}

/** Publishes panes to TM_PANES the way the engine does (`Nats-Msg-Id` = `id#seq`). */
export async function publishPanes(nc: NatsConnection, panes: readonly Pane[]): Promise<void> {
  const js = jetstream(nc);
  await Promise.all(
    panes.map((p) => {
      const h = headers();
      h.set("Nats-Msg-Id", `${p.id}#${p.seq}`);
      return js.publish(panesSubject(p.policy, p.window.end - p.window.start), JSON.stringify(p), { headers: h });
    }),
  );
}

/**
 * Publishes panes of one subject to TM_PANES as ONE message, a batch (one JSON per line), the way
 * the engine writes them (docs/decisions/0012-batched-transport.md, "Pane batches").
 */
export async function publishPaneBatch(nc: NatsConnection, msgId: string, panes: readonly Pane[]): Promise<void> {
  const first = panes[0];
  if (!first) throw new Error("a pane batch holds at least one pane");
  const h = headers();
  h.set("Nats-Msg-Id", msgId);
  const body = encodePaneBatch(panes.map((p) => JSON.stringify(p)));
  await jetstream(nc).publish(panesSubject(first.policy, first.window.end - first.window.start), body, { headers: h });
}

/**
 * Publishes panes to TM_PANES under Nats-Msg-Id `id#seq` + `suffix`: a pane JetStream already
 * holds, sent again this way, is stored again (its dedupe never sees it) and so really reaches the
 * dashboard, whose own idempotency on (id, seq) must absorb it.
 */
export async function publishPanesAround(nc: NatsConnection, panes: readonly Pane[], suffix: string): Promise<void> {
  const js = jetstream(nc);
  for (const p of panes) {
    const h = headers();
    h.set("Nats-Msg-Id", `${p.id}#${p.seq}${suffix}`);
    await js.publish(panesSubject(p.policy, p.window.end - p.window.start), JSON.stringify(p), { headers: h });
  }
}

/** Messages TM_PANES holds. */
export async function storedPanes(nc: NatsConnection): Promise<number> {
  return (await (await jetstreamManager(nc)).streams.info("TM_PANES")).state.messages;
}

/** A real WebSocket client that records every frame it receives. */
export interface WsClient {
  readonly ws: WebSocket;
  readonly frames: ServerFrame[];
  send(frame: unknown): void;
  /** Waits until a received frame satisfies `pred`, and returns it. */
  next<T extends ServerFrame["type"]>(
    type: T,
    pred?: (f: Extract<ServerFrame, { type: T }>) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<ServerFrame, { type: T }>>;
  close(): Promise<void>;
}

export async function connectWs(url: string, opts: { origin?: string } = {}): Promise<WsClient> {
  const ws = new WebSocket(
    url.replace(/^http/, "ws") + (url.includes("/ws") ? "" : "/ws"),
    opts.origin ? { origin: opts.origin } : {},
  );
  const frames: ServerFrame[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data: Buffer) => {
    frames.push(JSON.parse(data.toString("utf8")) as ServerFrame);
    for (const w of waiters) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return {
    ws,
    frames,
    send: (f) => ws.send(JSON.stringify(f)),
    next(type, pred = () => true, timeoutMs = 10_000) {
      type F = Extract<ServerFrame, { type: typeof type }>;
      const find = (): F | undefined => frames.find((f): f is F => f.type === type && pred(f as F));
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const f = find();
          if (!f) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(f);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${type} frame within ${timeoutMs} ms; got ${frames.map((f) => f.type).join(",")}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once("close", () => resolve());
        ws.close();
      }),
  };
}

/** Every pane (id, seq) received in snapshot and panes frames, in order. */
export function receivedPanes(frames: readonly ServerFrame[]): Pane[] {
  const out: Pane[] = [];
  for (const f of frames) if (f.type === "snapshot" || f.type === "panes") for (const e of f.panes) out.push(e.pane);
  return out;
}

/** A test nats-server, a publisher connection and an in-process dashboard server on it. */
export interface DashboardRig {
  readonly nats: TestNats;
  /** The publisher connection (replaced by reconnect()). */
  nc: NatsConnection;
  readonly dash: DashboardServer;
  /** A fresh publisher connection, e.g. after nats.restart(). */
  reconnect(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRig(config: DashboardConfigInput, opts: { stream: boolean }): Promise<DashboardRig> {
  const nats = await startTestNats();
  const nc = await connect({ servers: nats.url, noAsyncTraces: true });
  if (opts.stream) await createPanesStream(nc);
  const dash = await startDashboard(
    resolveConfig({ logLevel: "warn", retryMs: "100ms", port: 0, nats: nats.url, ...config }),
  );
  const rig: DashboardRig = {
    nats,
    nc,
    dash,
    async reconnect() {
      await rig.nc.close();
      rig.nc = await connect({ servers: nats.url, noAsyncTraces: true });
    },
    async stop() {
      await dash.close();
      await rig.nc.close();
      await nats.stop();
    },
  };
  return rig;
}
