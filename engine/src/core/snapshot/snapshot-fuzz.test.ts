import { describe, expect, it } from "vitest";
import { capture, feed } from "../__fixtures__/capture.js";
import { crc32 } from "./byte-codec.js";
import { createCore, restoreCore } from "../create-core.js";
import { CoreError } from "../errors.js";
import { Prng } from "../prng.js";
import { simulate } from "../simulation.js";
import { validateCoreConfig } from "../validate-config.js";

const config = validateCoreConfig({ partitions: 2, windows: ["10s", { kind: "sliding", size: "20s", slide: "10s" }] });

function snapshot(): Uint8Array {
  const core = createCore(config);
  feed(core, simulate({ seed: 8, events: 400, services: 3 }).slice(0, 300), capture(), 2);
  return core.snapshot().slice();
}

/** Recomputes the trailing CRC so that mutated content reaches the decoder. */
function reseal(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  new DataView(out.buffer).setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)), true);
  return out;
}

function outcome(bytes: Uint8Array): string {
  try {
    restoreCore(config, bytes);
    return "ok";
  } catch (e) {
    expect(e).toBeInstanceOf(CoreError);
    return (e as CoreError).code;
  }
}

describe("snapshot decoding never fails without a code", () => {
  const snap = snapshot();
  const rng = new Prng(99);

  it("every truncation and every single-byte change is refused by the checksum", () => {
    for (let n = 0; n < snap.length; n += Math.max(1, Math.floor(snap.length / 300)))
      expect(outcome(snap.subarray(0, n))).toBe("TM_SNAPSHOT_CORRUPT");
    for (let i = 0; i < 300; i++) {
      const bad = snap.slice();
      const at = rng.int(bad.length);
      bad[at] = ((bad[at] as number) + 1 + rng.int(255)) & 0xff;
      expect(["TM_SNAPSHOT_CORRUPT", "TM_SNAPSHOT_VERSION"]).toContain(outcome(bad));
    }
  });

  it("mutated content behind a valid checksum decodes or throws a coded CoreError, never anything else", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const bad = snap.slice();
      for (let k = 1 + rng.int(3); k > 0; k--) bad[8 + rng.int(bad.length - 12)] = rng.int(256);
      seen.add(outcome(reseal(bad)));
    }
    expect(seen.has("TM_SNAPSHOT_CORRUPT")).toBe(true);
  });
});
