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

/**
 * A body's records in the form it carries them: decoded records for a binary body, JSON lines for
 * NDJSON (gzip of either unwrapped first). The one format dispatch: the functions below, and readers
 * that keep a record's object and its text apart (the dashboard's pane store), build on it.
 */
export type PaneBodyParts = { records: unknown[]; lines?: undefined } | { lines: string[]; records?: undefined };

export function paneBodyParts(body: Uint8Array): PaneBodyParts {
  const plain = isGzipBody(body) ? gunzipSync(body) : body;
  return isBinaryPaneBody(plain) ? { records: readPaneRecords(plain) } : { lines: paneBatchLines(plain) };
}

/** The records of a TM_PANES / TM_LATE body as objects (binary, NDJSON, gzip-compressed or not). */
export function decodePaneRecords(body: Uint8Array): unknown[] {
  const parts = paneBodyParts(body);
  return parts.records ?? parts.lines.map((line) => JSON.parse(line) as unknown);
}

/** The JSON of each pane (or late record) of a TM_PANES / TM_LATE body, whatever its encoding. */
export function decodePaneBody(body: Uint8Array): string[] {
  const parts = paneBodyParts(body);
  return parts.lines ?? parts.records.map((r) => JSON.stringify(r));
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
