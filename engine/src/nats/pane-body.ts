/**
 * Reading a TM_PANES or TM_LATE message body (docs/decisions/0012-batched-transport.md, "Pane
 * batches"; docs/decisions/0034-sessions-at-scale.md): NDJSON, one pane or late record per line —
 * gzip-compressed by engines that compress their output (the default), recognised by gzip's magic
 * bytes, so a reader takes either. Pane JSON compresses about tenfold: a message is one input
 * message's panes on one subject, with the same keys and ids line after line.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { paneBatchLines } from "../protocol.js";

/** True when a body is gzip (its first two bytes 1f 8b); NDJSON starts with "{". */
export function isGzipBody(body: Uint8Array): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/** The JSON of each pane (or late record) of a TM_PANES / TM_LATE message body, compressed or not. */
export function paneBodyLines(body: Uint8Array): string[] {
  return paneBatchLines(isGzipBody(body) ? gunzipSync(body) : body);
}

/**
 * A body as compressing engines write it (gzip, fastest level: the JSON's repetition is what it
 * finds), in a buffer of its own size: zlib returns it inside a 16 KiB chunk, which a publish
 * window would hold (and count, runtime/publish-window.ts) until the body is acknowledged.
 */
export function compressPaneBody(body: Uint8Array): Uint8Array {
  const gz = gzipSync(body, { level: 1 });
  return gz.byteLength < gz.buffer.byteLength ? new Uint8Array(gz) : gz;
}
