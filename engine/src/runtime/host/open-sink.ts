/**
 * The sink an operator's panes and late records go to (docs/decisions/0017-engine-throughput.md):
 * a PaneSink on the role's connection, or the pane publisher thread with its own.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { PaneSink } from "../output/pane-sink.js";
import { PaneThreadSink } from "../output/pane-thread-sink.js";
import type { OperatorSink } from "../output/operator-sink.js";

/** What the sink needs of the role's config (EngineConfig, MergeConfig). */
export interface SinkConfig {
  natsUrl: string;
  maxInFlight: number;
  maxInFlightBytes: number;
}

/**
 * A PaneSink on the engine's connection, or (on request) the pane publisher thread with its own;
 * one log line per resend sweep, not per message (docs/decisions/0035-backpressure.md).
 */
export function paneSink(config: SinkConfig, nc: NatsConnection, log: Logger, thread: boolean): OperatorSink {
  const onError = (why: string, subject: string): void =>
    log.warn({ why, subject }, "publish refused; it is sent again, with the same message id, after its timeout");
  const onSweep = (r: object): void =>
    log.warn(r, "unacknowledged publishes sent again with their message ids (timeouts doubling per attempt)");
  const limits = { messages: config.maxInFlight, bytes: config.maxInFlightBytes };
  if (!thread) return new PaneSink(nc, { limits, onError, onSweep });
  const opts = { natsUrl: config.natsUrl, maxInFlight: config.maxInFlight, maxInFlightBytes: config.maxInFlightBytes };
  const sink = PaneThreadSink.start(opts, onError);
  sink.onSweep = onSweep;
  return sink;
}
