/**
 * Reading a TM_PANES or TM_LATE message body: the ONE decoder every reader goes through
 * (docs/protocol.md, "Pane bodies"; docs/decisions/0047-binary-panes.md). A body is one of
 *
 * - the binary pane encoding ("TMPN" and a version byte, protocol/pane-records.ts), what engines
 *   and merge operators write now;
 * - NDJSON, one pane or late record per line (docs/decisions/0012-batched-transport.md), what they
 *   wrote before, and what a message written before batching holds (one line);
 * - either of them gzip-compressed (gzip's magic bytes 1f 8b).
 *
 * Whichever it is, a reader gets each record's JSON text, byte for byte what the JSON path wrote,
 * so a rolling upgrade and the streams written before it read the same. A binary body of a version
 * newer than this code reads is refused with PaneBodyError (code TM_PANE_BODY_VERSION) naming it.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { isBinaryPaneBody, paneBatchLines, readPaneRecords } from "../protocol.js";

/** True when a body is gzip (its first two bytes 1f 8b); NDJSON starts with "{", binary with "TMPN". */
export function isGzipBody(body: Uint8Array): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/** The records of a TM_PANES / TM_LATE body as objects (binary, NDJSON, gzip-compressed or not). */
export function decodePaneRecords(body: Uint8Array): unknown[] {
  const plain = isGzipBody(body) ? gunzipSync(body) : body;
  if (isBinaryPaneBody(plain)) return readPaneRecords(plain);
  return paneBatchLines(plain).map((line) => JSON.parse(line) as unknown);
}

/** The JSON of each pane (or late record) of a TM_PANES / TM_LATE body, whatever its encoding. */
export function decodePaneBody(body: Uint8Array): string[] {
  const plain = isGzipBody(body) ? gunzipSync(body) : body;
  if (isBinaryPaneBody(plain)) return readPaneRecords(plain).map((r) => JSON.stringify(r));
  return paneBatchLines(plain);
}

/** The same function as decodePaneBody, by the name readers used before the binary encoding. */
export const paneBodyLines = decodePaneBody;

/**
 * A body as compressing engines write it (gzip, fastest level), in a buffer of its own size: zlib
 * returns it inside a 16 KiB chunk, which a publish window would hold (and count,
 * runtime/output/publish-window.ts) until the body is acknowledged.
 */
export function compressPaneBody(body: Uint8Array): Uint8Array {
  const gz = gzipSync(body, { level: 1 });
  return gz.byteLength < gz.buffer.byteLength ? new Uint8Array(gz) : gz;
}
