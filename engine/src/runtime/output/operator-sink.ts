/**
 * The sink an operator's panes and late records go to, as the OperatorHost and the CompressingSink
 * in front of it need it (PaneSink on the operator's connection, PaneThreadSink on a publisher
 * thread, CompressingSink around either): idempotent publishes with a window that can hold the
 * input (docs/decisions/0035-backpressure.md).
 */
import type { PublishStats } from "./publish-window.js";

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
