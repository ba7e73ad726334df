/**
 * TM_PANES and TM_LATE message bodies (docs/decisions/0012-batched-transport.md, "Pane batches"):
 * NDJSON, one pane (or late record) as JSON per line, in the order the core emitted them. A
 * message written before batching holds one JSON object and no newline: a batch of one, read the
 * same way. JSON text never holds a raw newline (strings escape it), so a line is a whole pane.
 *
 * The engine writes bodies straight as bytes (json-lines.ts), the same text.
 *
 * Pure: no node:* imports, no clock, no env.
 */

/** One message body from the JSON of its panes (or late records). */
export function encodePaneBatch(lines: readonly string[]): string {
  return lines.join("\n");
}

const utf8 = new TextDecoder();

/** The JSON of each pane (or late record) of a message body (text or UTF-8 bytes), in order; empty lines are skipped. */
export function paneBatchLines(message: string | Uint8Array): string[] {
  const body = typeof message === "string" ? message : utf8.decode(message);
  const out: string[] = [];
  let start = 0;
  while (start < body.length) {
    let end = body.indexOf("\n", start);
    if (end < 0) end = body.length;
    if (end > start) out.push(body.slice(start, end));
    start = end + 1;
  }
  return out;
}
