/** TM_PANES bodies read the same compressed or not (docs/decisions/0012-batched-transport.md, "Pane batches"). */
import { describe, expect, it } from "vitest";
import { encodePaneBatch } from "../protocol.js";
import { compressPaneBody, isGzipBody, paneBodyLines } from "./pane-body.js";

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
