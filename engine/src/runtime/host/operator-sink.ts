/**
 * What the OperatorHost needs of the sink its operator's panes and late records go to (PaneSink on
 * the operator's connection, PaneThreadSink on a publisher thread): idempotent publishes with a
 * window that can hold the input (docs/decisions/0035-backpressure.md).
 */
import type { PublishStats } from "../output/pane-sink.js";

export interface OperatorSink {
  publish(subject: string, body: Uint8Array, msgId: string): void;
  readonly saturated: boolean;
  readonly inFlight: number;
  readonly acked: number;
  /** Its window, for tidemark_*_publish_* and tm.status (docs/decisions/0035-backpressure.md). */
  stats(): PublishStats;
  /** Set by the host: where the buffers of acknowledged bodies go (BodyBuffers). */
  onReturned: (buffer: ArrayBuffer) => void;
  room(): Promise<void>;
  flush(): Promise<void>;
  close(): void;
}
