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

/** A body as compressing engines write it (gzip, fastest level: the JSON's repetition is what it finds). */
export function compressPaneBody(body: Uint8Array): Uint8Array {
  return gzipSync(body, { level: 1 });
}
