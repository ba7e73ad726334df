/**
 * A sink for operator tests that publishes nowhere: it takes every publish and acknowledges none
 * (the tests that use it never wait for acknowledgements); `seen` is shown each publish.
 */
import type { OperatorSink } from "../../output/operator-sink.js";

export function quietSink(seen?: (subject: string, body: Uint8Array, msgId: string) => void): OperatorSink {
  const none = { messages: 0, bytes: 0 };
  return {
    publish: (subject, body, msgId) => seen?.(subject, body, msgId),
    saturated: false,
    inFlight: 0,
    acked: 0,
    stats: () => ({ inFlight: none, waiting: none, limits: { messages: 1, bytes: 1 }, resends: 0 }),
    onReturned: () => undefined,
    room: () => Promise.resolve(),
    flush: () => Promise.resolve(),
    close: () => undefined,
  };
}
