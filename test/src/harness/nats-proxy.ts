/**
 * A TCP proxy between NATS clients and a real nats-server that reads the NATS client protocol
 * frame by frame (INFO, CONNECT, PUB/HPUB, MSG/HMSG, PING, ...) and lets a test hold back or drop
 * chosen frames, e.g. the PubAcks TM_PANES sends back to an engine, or pane publishes lost while a
 * server goes down. Every other frame passes unchanged and in order. A connection whose server
 * side closes (the server stopped) is closed on the client side too, so the client sees the
 * disconnect and reconnects through the proxy.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export type FrameVerdict = "pass" | "hold" | "drop";

export interface NatsFrame {
  /** Upper-cased protocol operation: MSG, HMSG, PUB, HPUB, INFO, PING, ... */
  readonly op: string;
  /** The control line without its CRLF, e.g. `HPUB tm.panes.fast.10000 _INBOX.x.7 34 120`. */
  readonly line: string;
  /** Headers and body of a message frame (empty for other frames). */
  readonly payload: Buffer;
}

export type FrameRule = (frame: NatsFrame) => FrameVerdict;

export interface NatsProxy {
  readonly url: string;
  /** Decides each frame from the server to a client (default: pass). */
  toClient: FrameRule;
  /** Decides each frame from a client to the server (default: pass); these are never held. */
  toServer: (frame: NatsFrame) => "pass" | "drop";
  /** Frames held so far and not yet released. */
  held(): number;
  /** Frames dropped so far. */
  dropped(): number;
  /** Sends every held frame on, in the order it was held. */
  release(): void;
  close(): Promise<void>;
}

const PASS: FrameRule = () => "pass";

/** A PubAck from TM_PANES (server to client). */
export function isPanesAck(f: NatsFrame): boolean {
  return f.op === "MSG" && f.payload.toString("utf8").startsWith('{"stream":"TM_PANES"');
}

/** A publish to a `tm.panes.*` subject (client to server; the engine sends them with headers). */
export function isPanePublish(f: NatsFrame): boolean {
  return (f.op === "HPUB" || f.op === "PUB") && (f.line.split(" ")[1] ?? "").startsWith("tm.panes.");
}

/**
 * A PubAck from TM_PANES or TM_LATE: the engine's pane publisher sends both under one window
 * (docs/decisions/0035-backpressure.md, "The window"), so holding these holds every ack it counts.
 */
export function isPublisherAck(f: NatsFrame): boolean {
  return isPanesAck(f) || (f.op === "MSG" && f.payload.toString("utf8").startsWith('{"stream":"TM_LATE"'));
}

/** A publish to a `tm.panes.*` or `tm.late.*` subject: what the engine's pane publisher sends. */
export function isPublisherPublish(f: NatsFrame): boolean {
  const subject = f.line.split(" ")[1] ?? "";
  return (f.op === "HPUB" || f.op === "PUB") && (subject.startsWith("tm.panes.") || subject.startsWith("tm.late."));
}
const WITH_PAYLOAD = new Set(["MSG", "HMSG", "PUB", "HPUB"]);

/** Listens on a free loopback port and forwards each connection to `upstreamPort`. */
export async function startNatsProxy(upstreamPort: number): Promise<NatsProxy> {
  const links = new Set<{ client: Socket; server: Socket; held: Buffer[] }>();
  let dropped = 0;
  const server: Server = createServer((client) => forward(client));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const proxy: NatsProxy = {
    url: `nats://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    toClient: PASS,
    toServer: () => "pass",
    held: () => [...links].reduce((n, l) => n + l.held.length, 0),
    dropped: () => dropped,
    release() {
      for (const l of links) {
        for (const raw of l.held) if (!l.client.destroyed) l.client.write(raw);
        l.held.length = 0;
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const l of links) l.client.destroy();
        server.close(() => resolve());
      }),
  };
  function forward(client: Socket): void {
    const upstream = connect(upstreamPort, "127.0.0.1");
    const link = { client, server: upstream, held: [] as Buffer[] };
    links.add(link);
    const end = (): void => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.on(
      "data",
      frames((f, raw) => {
        if (proxy.toServer(f) === "drop") dropped++;
        else upstream.write(raw);
      }),
    );
    upstream.on(
      "data",
      frames((f, raw) => {
        const v = proxy.toClient(f);
        if (v === "pass") client.write(raw);
        else if (v === "hold") link.held.push(raw);
        else dropped++;
      }),
    );
  }
  return proxy;
}

/** A data listener that cuts the byte stream into whole protocol frames. */
function frames(each: (frame: NatsFrame, raw: Buffer) => void): (chunk: Buffer) => void {
  let buf: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      const eol = buf.indexOf("\r\n");
      if (eol < 0) return;
      const line = buf.subarray(0, eol).toString("latin1");
      const op = (line.split(" ", 1)[0] ?? "").toUpperCase();
      let size = eol + 2;
      let payload: Buffer = Buffer.alloc(0);
      if (WITH_PAYLOAD.has(op)) {
        const total = Number(line.trim().split(/\s+/).at(-1));
        if (buf.length < eol + 2 + total + 2) return;
        payload = buf.subarray(eol + 2, eol + 2 + total);
        size = eol + 2 + total + 2;
      }
      const raw = Buffer.from(buf.subarray(0, size));
      buf = buf.subarray(size);
      each({ op, line, payload }, raw);
    }
  };
}
