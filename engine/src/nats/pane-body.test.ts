/**
 * TM_PANES bodies read the same whatever their encoding (docs/protocol.md, "Pane bodies"): binary
 * or NDJSON, compressed or not; the binary one gives the JSON path's bytes.
 */
import { describe, expect, it } from "vitest";
import { encodePaneBatch, JsonLines, PANE_BODY_VERSION, PaneBodyError, PaneRecords } from "../protocol.js";
import { randomLate, randomPane } from "../protocol/__fixtures__/random-records.js";
import { compressPaneBody, decodePaneBody, decodePaneRecords, isGzipBody, paneBodyLines } from "./pane-body.js";

describe("pane bodies", () => {
  const lines = Array.from({ length: 200 }, (_, i) =>
    JSON.stringify({
      id: `dashboard|api/GET%20%2Fx|10000|${1_000 * i}`,
      seq: i,
      kind: "early",
      value: { count: i, p99: 41.79065066782366 },
    }),
  );
  const plain = new TextEncoder().encode(encodePaneBatch(lines));

  it("gives the same lines from NDJSON and from its gzip, which is several times smaller", () => {
    const packed = compressPaneBody(plain);
    expect(isGzipBody(packed)).toBe(true);
    expect(isGzipBody(plain)).toBe(false);
    expect(paneBodyLines(packed)).toEqual(lines);
    expect(paneBodyLines(plain)).toEqual(lines);
    expect(packed.length * 5).toBeLessThan(plain.length);
  });

  it("holds a compressed body in a buffer of its own size, not in zlib's 16 KiB chunk", () => {
    const packed = compressPaneBody(plain);
    expect(packed.byteOffset).toBe(0);
    expect(packed.buffer.byteLength).toBe(packed.byteLength);
  });

  it("reads an empty body and a one-pane body written before batching", () => {
    expect(paneBodyLines(new Uint8Array(0))).toEqual([]);
    const one = new TextEncoder().encode(lines[0]);
    expect(paneBodyLines(one)).toEqual([lines[0]]);
    expect(paneBodyLines(compressPaneBody(one))).toEqual([lines[0]]);
  });
});

describe("binary pane bodies", () => {
  const records = Array.from({ length: 500 }, (_, i) => (i % 4 === 1 ? randomLate(i) : randomPane(i)));
  const binary = new PaneRecords();
  for (const r of records) binary.add(r);
  const body = binary.body();
  const jsonPath = new JsonLines();
  for (const r of records) jsonPath.add(r);
  const jsonBody = jsonPath.body();

  it("decode to the JSON path's bytes, gzip-compressed or not; the JSON path's own bodies read as before", () => {
    const want = Buffer.from(jsonBody).toString("utf8");
    expect(decodePaneBody(body).join("\n")).toBe(want);
    expect(decodePaneBody(compressPaneBody(body)).join("\n")).toBe(want);
    expect(decodePaneBody(jsonBody).join("\n")).toBe(want);
    expect(decodePaneBody(compressPaneBody(jsonBody)).join("\n")).toBe(want);
    expect(paneBodyLines).toBe(decodePaneBody);
    expect(decodePaneRecords(body)).toEqual(decodePaneRecords(jsonBody));
  });

  it("refuses a body of a newer version, naming it", () => {
    const newer = body.slice();
    newer[4] = PANE_BODY_VERSION + 1;
    expect(() => decodePaneBody(newer)).toThrow(PaneBodyError);
    expect(() => decodePaneBody(compressPaneBody(newer))).toThrow(`version ${PANE_BODY_VERSION + 1} is newer`);
  });
});
