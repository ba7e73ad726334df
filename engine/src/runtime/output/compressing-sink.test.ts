/** CompressingSink (docs/decisions/0047-binary-panes.md): order, flush, bounds, buffers given back. */
import { MessageChannel } from "node:worker_threads";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { CompressingSink, COMPRESSING_LIMITS, type GzipPort } from "./compressing-sink.js";
import type { OperatorSink } from "./operator-sink.js";
import { serveGzipPort } from "./gzip-thread.js";
import type { PublishStats } from "./publish-window.js";

const open: Array<() => void> = [];
afterEach(() => open.splice(0).forEach((close) => close()));

/** The gzip thread's protocol over a MessageChannel (the worker runs the same serveGzipPort). */
function port(): GzipPort {
  const { port1, port2 } = new MessageChannel();
  serveGzipPort(port2);
  open.push(() => (port1.close(), port2.close()));
  return {
    postMessage: (m, transfer) => port1.postMessage(m, transfer),
    on: (event, f) => port1.on(event, f),
    stop: () => port1.close(),
  };
}

/** An inner sink that keeps what it is handed; `acked` counts flushes' worth. */
function inner(): OperatorSink & { got: Array<{ subject: string; body: Uint8Array; msgId: string }> } {
  const got: Array<{ subject: string; body: Uint8Array; msgId: string }> = [];
  return {
    got,
    publish: (subject, body, msgId) => void got.push({ subject, body, msgId }),
    saturated: false,
    inFlight: 0,
    acked: 0,
    stats: () => ({}) as PublishStats,
    onReturned: () => undefined,
    room: () => Promise.resolve(),
    flush: () => Promise.resolve(),
    close: () => undefined,
  };
}

/** Bodies of very different sizes, so the thread pool finishes them out of order. */
const body = (i: number): Uint8Array => {
  const b = new Uint8Array(i % 3 === 0 ? 2_000_000 : 10 + i);
  for (let j = 0; j < b.length; j++) b[j] = (j * 31 + i) & 0xff;
  return b;
};

describe("CompressingSink", () => {
  it("hands every body over compressed, in publish order, by the time flush resolves", async () => {
    const to = inner();
    const given: ArrayBuffer[] = [];
    const sink = new CompressingSink(to, (b) => void given.push(b), { messages: 1_000, bytes: 1e9 }, port());
    const sent = Array.from({ length: 40 }, (_, i) => body(i));
    sent.forEach((b, i) => sink.publish(`s.${i % 4}`, b.slice(), `id-${i}`));
    expect(sink.inFlight).toBe(40 - to.got.length);
    await sink.flush();
    expect(to.got.map((m) => m.msgId)).toEqual(sent.map((_, i) => `id-${i}`));
    expect(to.got.map((m) => m.subject)).toEqual(sent.map((_, i) => `s.${i % 4}`));
    to.got.forEach((m, i) => {
      expect(Buffer.from(gunzipSync(m.body)).equals(Buffer.from(sent[i] as Uint8Array))).toBe(true);
      expect(m.body.buffer.byteLength).toBe(m.body.byteLength);
    });
    expect(given).toHaveLength(40);
    expect(given.map((b) => b.byteLength)).toEqual(sent.map((b) => b.length));
    expect(sink.inFlight).toBe(0);
  });

  it("is saturated while its bound of bodies is being compressed, and room() waits for it", async () => {
    const sink = new CompressingSink(inner(), () => undefined, { messages: 3, bytes: 1e9 }, port());
    sink.publish("s", body(0), "a");
    sink.publish("s", body(3), "b");
    expect(sink.saturated).toBe(false);
    sink.publish("s", body(6), "c");
    expect(sink.saturated).toBe(true);
    await sink.room();
    expect(sink.saturated).toBe(false);
    const bytes = new CompressingSink(inner(), () => undefined, { messages: 100, bytes: 1_000_000 }, port());
    bytes.publish("s", body(0), "big");
    expect(bytes.saturated).toBe(true);
    await bytes.flush();
    expect(bytes.saturated).toBe(false);
  });
});

it("rejects flush once the gzip thread answers out of line: its bodies stay unacknowledged", async () => {
  let answer: ((m: { id: number; packed: Uint8Array; buffer: ArrayBuffer }) => void) | undefined;
  const wrong: GzipPort = {
    postMessage: (m) => answer?.({ id: m.id + 1, packed: new Uint8Array(1), buffer: new ArrayBuffer(1) }),
    on: (_e, f) => (answer = f),
    stop: () => undefined,
  };
  const to = inner();
  const sink = new CompressingSink(to, () => undefined, COMPRESSING_LIMITS, wrong);
  sink.publish("s", body(1), "a");
  await expect(sink.flush()).rejects.toThrow(/answered body 1, not 0/);
  expect(to.got).toEqual([]);
});
