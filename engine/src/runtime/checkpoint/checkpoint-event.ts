/** A checkpoint made durable, as the operators report it (log line "checkpoint written", tidemark_*_checkpoint_*). */
export interface CheckpointEvent {
  file: string;
  bytes: number;
  /** The pause: input held from the cut until the snapshot was captured, ms of wall time. */
  pauseMs: number;
  /** The slices' work within the pause, ms: the next checkpoint is spaced by it (checkpoint-spacing.ts). */
  holdWorkMs: number;
  /** The longest synchronous slice of that encoding, ms. */
  longestSliceMs: number;
  /** The encoding's own work, the sum of its slices, ms: the next checkpoint comes no sooner than 20× this. */
  workMs: number;
  /** Snapshot to durable file, including waiting for pane acks, ms. */
  totalMs: number;
  logTime: number | null;
}
