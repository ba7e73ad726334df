/**
 * Golden bytes of the checkpoint envelope (docs/operations.md, "Checkpoints"), around a fixed
 * snapshot payload: the file outlives the process that wrote it, so a layout change must be
 * deliberate (a new CHECKPOINT_VERSION and a reader for the old one). The core snapshot inside is
 * an opaque payload here; its own format is pinned where it is defined.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CHECKPOINT_VERSION,
  CHECKPOINT_VERSION_GROUPS,
  CHECKPOINT_VERSION_PARTIALS,
  CHECKPOINT_VERSION_PENDING,
  decodeCheckpoint,
  decodeCheckpointHeader,
  encodeCheckpoint,
  encodeCheckpointParts,
  type Checkpoint,
} from "./checkpoint-codec.js";
import { RuntimeError } from "../errors.js";

const fixed: Checkpoint = {
  header: {
    worker: "w1",
    partitionCount: 8,
    partitions: [2, 5],
    offsets: [
      { lastSeq: 17, partialSeq: 0, partialCount: 0, logTime: 1767225660000 },
      { lastSeq: 9, partialSeq: 10, partialCount: 3, logTime: null },
    ],
    logTime: 1767225660000,
    wallTime: 1767225661234,
  },
  snapshot: Uint8Array.from([0x54, 0x4d, 0x43, 0x53, 0, 1, 2, 3, 0xfe, 0xff]),
};

const golden =
  "544d434b00000001000000f77b22776f726b6572223a227731222c22706172746974696f6e436f756e74223a382c2270" +
  "6172746974696f6e73223a5b322c355d2c226f666673657473223a5b7b226c617374536571223a31372c227061727469" +
  "616c536571223a302c227061727469616c436f756e74223a302c226c6f6754696d65223a313736373232353636303030" +
  "307d2c7b226c617374536571223a392c227061727469616c536571223a31302c227061727469616c436f756e74223a33" +
  "2c226c6f6754696d65223a6e756c6c7d5d2c226c6f6754696d65223a313736373232353636303030302c2277616c6c54" +
  "696d65223a313736373232353636313233347d0000000a544d435300010203feffccf367f6702d09f03ded8d9a95ed49" +
  "461d4a3dc45a3391efc4f4570087655d5e";

describe("checkpoint envelope golden bytes", () => {
  it("encodes the fixed checkpoint to the committed bytes", () => {
    expect(CHECKPOINT_VERSION).toBe(1);
    expect(encodeCheckpoint(fixed).toString("hex")).toBe(golden);
  });

  it("the pieces hashed across turns are the same bytes (the store's path), the snapshot not copied", async () => {
    expect(Buffer.concat(await encodeCheckpointParts(fixed)).toString("hex")).toBe(golden);
    const big = { ...fixed, snapshot: Uint8Array.from({ length: 3_000_001 }, (_, i) => (i * 31) & 0xff) };
    const parts = await encodeCheckpointParts(big, 0);
    expect(parts[1]).toBe(big.snapshot);
    expect(Buffer.concat(parts).equals(encodeCheckpoint(big))).toBe(true);
    const subjects = [{ subject: "tm.late.dashboard", chunk: 1, lines: ['{"a":"b\\n"}'], units: 12 }];
    const pending = { ...big, header: { ...big.header, pending: [{ partition: 5, seq: 10, subjects }] } };
    expect(Buffer.concat(await encodeCheckpointParts(pending)).equals(encodeCheckpoint(pending))).toBe(true);
  });

  it("the committed bytes follow the documented layout: TMCK, u32 version, header JSON, snapshot, SHA-256", () => {
    const buf = Buffer.from(golden, "hex");
    expect(buf.toString("latin1", 0, 4)).toBe("TMCK");
    expect(buf.readUInt32BE(4)).toBe(1);
    const headerLen = buf.readUInt32BE(8);
    expect(JSON.parse(buf.toString("utf8", 12, 12 + headerLen))).toEqual(fixed.header);
    const snapLen = buf.readUInt32BE(12 + headerLen);
    expect([...buf.subarray(16 + headerLen, 16 + headerLen + snapLen)]).toEqual([...fixed.snapshot]);
    const end = 16 + headerLen + snapLen;
    expect(buf.length).toBe(end + 32);
    expect(createHash("sha256").update(buf.subarray(0, end)).digest("hex")).toBe(buf.subarray(end).toString("hex"));
  });

  it("decodes the committed bytes to the fixed checkpoint", () => {
    const back = decodeCheckpoint(Buffer.from(golden, "hex"), "golden");
    expect(back.header).toEqual(fixed.header);
    expect([...back.snapshot]).toEqual([...fixed.snapshot]);
  });

  it("refuses the committed bytes with one bit flipped, naming the checksum", () => {
    const bad = Buffer.from(golden, "hex");
    bad[20] = (bad[20] as number) ^ 1;
    let caught: unknown;
    try {
      decodeCheckpoint(bad, "golden");
    } catch (e) {
      caught = e;
    }
    expect(caught instanceof RuntimeError && caught.code).toBe("TM_CHECKPOINT_CORRUPT");
    expect((caught as Error).message).toMatch(/checkpoint golden is unusable: checksum mismatch/);
  });

  it("is version 2 when the header carries pending batches, which round-trip; without them version 1", () => {
    const pending = [
      {
        partition: 5,
        seq: 10,
        subjects: [{ subject: "tm.late.dashboard", chunk: 1, lines: ['{"a":"b\\n"}'], units: 12 }],
      },
    ];
    const buf = encodeCheckpoint({ ...fixed, header: { ...fixed.header, pending } });
    expect(buf.readUInt32BE(4)).toBe(CHECKPOINT_VERSION_PENDING);
    expect(decodeCheckpoint(buf, "v2").header).toEqual({ ...fixed.header, pending });
    expect(encodeCheckpoint(fixed).readUInt32BE(4)).toBe(1);
    const v5 = Buffer.from(buf);
    v5.writeUInt32BE(5, 4);
    const rehashed = Buffer.concat([v5.subarray(0, -32), createHash("sha256").update(v5.subarray(0, -32)).digest()]);
    expect(() => decodeCheckpoint(rehashed, "v5")).toThrow(/version 5, this engine reads versions 1, 2, 3, 4/);
    expect(() => decodeCheckpointHeader(rehashed, "v5")).toThrow(/version 5, this engine reads versions 1, 2, 3, 4/);
  });

  it("is version 3 when the header carries the partial accumulator's state, which round-trips", () => {
    const partials = { from: 1_000, maxTs: [990, null], lastEventAt: [1_050, null], events: [3, 0], deltas: [] };
    const buf = encodeCheckpoint({ ...fixed, header: { ...fixed.header, partials } });
    expect(buf.readUInt32BE(4)).toBe(CHECKPOINT_VERSION_PARTIALS);
    expect(decodeCheckpoint(buf, "v3").header).toEqual({ ...fixed.header, partials });
  });

  it("is version 4 when the header carries groups or a restore epoch, and its header reads alone from the first bytes", () => {
    const groups = [{ partitions: [0, 1], lanes: [0, 1], coreLanes: 8 }];
    const header = { ...fixed.header, groups, epoch: 2 };
    const buf = encodeCheckpoint({ ...fixed, header });
    expect(buf.readUInt32BE(4)).toBe(CHECKPOINT_VERSION_GROUPS);
    expect(decodeCheckpoint(buf, "v4").header).toEqual(header);
    const need = decodeCheckpointHeader(buf.subarray(0, 20), "v4");
    expect(need).toEqual({ need: 12 + buf.readUInt32BE(8) });
    expect(decodeCheckpointHeader(buf.subarray(0, 12 + buf.readUInt32BE(8)), "v4")).toEqual({ header });
    expect(encodeCheckpoint({ ...fixed, header: { ...fixed.header, epoch: 0 } }).readUInt32BE(4)).toBe(1);
  });
});
