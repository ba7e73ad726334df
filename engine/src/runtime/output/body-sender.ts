/**
 * How an operator's emit groups reach its pane sink (docs/decisions/0017-engine-throughput.md,
 * docs/decisions/0034-sessions-at-scale.md, docs/decisions/0047-binary-panes.md): each body is
 * written into a reused buffer (BodyBuffers); with `compress` on (engine.compressPanes, the
 * default) it goes out gzip-compressed — on the operator's thread (`bodySender`) or on the thread
 * pool (`pooledBodySender`, through a CompressingSink) — and its buffer is free again once
 * compressed, else it goes out as written and its buffer comes back when the stream acknowledges it.
 */
import { compressPaneBody } from "../../nats/index.js";
import { BodyBuffers } from "./body-buffers.js";
import { CompressingSink } from "./compressing-sink.js";
import type { OperatorSink } from "./operator-sink.js";
import type { GroupMessage } from "./emit-group.js";

export interface BodySink {
  publish(subject: string, body: Uint8Array, msgId: string): void;
  onReturned: (buffer: ArrayBuffer) => void;
}

export function bodySender(
  sink: BodySink,
  compress: boolean,
): { buffers: BodyBuffers; send: (m: GroupMessage) => void } {
  const buffers = new BodyBuffers();
  if (!compress) {
    sink.onReturned = (b) => buffers.give(b);
    return { buffers, send: (m) => sink.publish(m.subject, m.body, m.msgId) };
  }
  sink.onReturned = () => undefined;
  return {
    buffers,
    send: (m) => {
      const packed = compressPaneBody(m.body);
      buffers.give(m.body.buffer as ArrayBuffer);
      sink.publish(m.subject, packed, m.msgId);
    },
  };
}

/**
 * The same with compression off the operator's thread: the operator publishes through the sink
 * returned (a CompressingSink around `sink` when compressing, else `sink` itself), which it also
 * flushes, gates on and reports.
 */
export function pooledBodySender(
  sink: OperatorSink,
  compress: boolean,
): { buffers: BodyBuffers; send: (m: GroupMessage) => void; sink: OperatorSink } {
  if (!compress) return { ...bodySender(sink, false), sink };
  const buffers = new BodyBuffers();
  const packing = new CompressingSink(sink, (b) => buffers.give(b));
  return { buffers, send: (m) => packing.publish(m.subject, m.body, m.msgId), sink: packing };
}
