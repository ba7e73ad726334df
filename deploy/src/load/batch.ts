/**
 * One `POST /v1/events` of `tidemark load`: its events, their NDJSON lines (the recording
 * format, docs/decisions/0002-event-batch-format.md), and the Idempotency-Key every attempt carries.
 * Pure.
 */
import type { DemoEvent } from "../demo/model.js";

export interface LoadBatch {
  /** Sent as `Idempotency-Key` on every attempt, so a retried batch is stored once. */
  readonly key: string;
  readonly events: readonly DemoEvent[];
  /** `JSON.stringify` of each event: `{"ts","service","route","status","latency_ms","user"}`. */
  readonly lines: readonly string[];
  /** Events in it that arrive late (1 s or more after they happened). */
  readonly late: number;
}

export function makeBatch(key: string, items: readonly { event: DemoEvent; late: boolean }[]): LoadBatch {
  const events: DemoEvent[] = [];
  const lines: string[] = [];
  let late = 0;
  for (const { event, late: isLate } of items) {
    events.push(event);
    lines.push(JSON.stringify(event));
    if (isLate) late++;
  }
  return { key, events, lines, late };
}

/** The request body: one event per line. */
export function batchBody(b: LoadBatch): string {
  return b.lines.join("\n") + "\n";
}

/** `items` in runs of at most `size`, in order. */
export function cut<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The `--record` lines of the batch's accepted events (all but `rejected`), each with `sent_at`,
 * the wall time (ms) its accepted attempt was sent.
 */
export function recordLines(b: LoadBatch, rejected: ReadonlySet<number>, sentAt: number): string {
  let out = "";
  const tail = `,"sent_at":${sentAt}}\n`;
  b.lines.forEach((line, i) => {
    if (!rejected.has(i)) out += line.slice(0, -1) + tail;
  });
  return out;
}
