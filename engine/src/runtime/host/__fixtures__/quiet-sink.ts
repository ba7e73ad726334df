/**
 * A sink for operator tests that publishes nowhere: it takes every publish and acknowledges none
 * (the tests that use it never wait for acknowledgements).
 */
import type { OperatorSink } from "../../output/operator-sink.js";

export function quietSink(): OperatorSink {
  const none = { messages: 0, bytes: 0 };
  return {
    publish: () => undefined,
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
