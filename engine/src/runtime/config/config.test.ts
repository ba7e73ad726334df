import { describe, expect, it } from "vitest";
import { parseEngineConfig } from "./config.js";
import { formatPartitionList, parsePartitionList } from "../input/partition-list.js";

describe("engine config", () => {
  it("defaults: all 8 partitions, 5 s checkpoints, 10 s idle, core sees the owned count", () => {
    const c = parseEngineConfig();
    expect(c.partitions).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(c.worker).toBe("engine-0-7");
    expect(c.checkpointDir).toBe("data/checkpoints/engine-0-7");
    expect([c.checkpointEveryMs, c.idleTimeoutMs, c.keepCheckpoints]).toEqual([5000, 10000, 3]);
    expect(c.core.partitions).toBe(8);
    expect(c.core.policies.map((p) => p.name)).toEqual(["dashboard", "alerting", "billing"]);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("layers file < env < flags", () => {
    const file = {
      partitionCount: 12,
      data: "/srv/tm",
      nats: { url: "nats://10.0.0.1:4222" },
      engine: { partitions: "0-5", checkpointEvery: "2s", idleTimeout: "3s" },
      windows: ["10s"],
    };
    const c = parseEngineConfig({
      file,
      env: { TIDEMARK_IDLE_TIMEOUT: "4s", TIDEMARK_PARTITIONS: "6-11" },
      flags: { partitions: "0-3,6", "idle-timeout": "1s" },
    });
    expect(c.partitionCount).toBe(12);
    expect(c.partitions).toEqual([0, 1, 2, 3, 6]);
    expect(c.worker).toBe("engine-0-3_6");
    expect(c.natsUrl).toBe("nats://10.0.0.1:4222");
    expect(c.dataDir).toBe("/srv/tm");
    expect(c.checkpointEveryMs).toBe(2000);
    expect(c.idleTimeoutMs).toBe(1000);
    expect(c.core.partitions).toBe(5);
    expect(c.core.windows).toEqual([{ kind: "tumbling", sizeMs: 10_000 }]);
    expect(parseEngineConfig({ file, env: { TIDEMARK_IDLE_TIMEOUT: "4s" } }).idleTimeoutMs).toBe(4000);
  });

  it("names the field and the fix on bad input", () => {
    expect(() => parseEngineConfig({ flags: { "idle-timeout": "soon" } })).toThrow(/--idle-timeout must be a duration/);
    expect(() => parseEngineConfig({ flags: { partitions: "0-9" } })).toThrow(
      /--partitions "0-9": partition 9 does not exist/,
    );
    expect(() => parseEngineConfig({ file: { engine: { checkpointEvry: "1s" } }, fileName: "t.json" })).toThrow(
      /t.json: engine.checkpointEvry must be one of the known keys/,
    );
    expect(() => parseEngineConfig({ file: { windows: [] }, fileName: "t.json" })).toThrow(/TM_CONFIG_INVALID|windows/);
    // The count's old key: refused, naming the new one (engine.partitions stays the owned set).
    expect(() => parseEngineConfig({ file: { partitions: 8 }, fileName: "t.json" })).toThrow(
      /t.json: the top-level "partitions" is now "partitionCount"/,
    );
  });

  it("backpressure bounds: defaults, layered like the rest, whole numbers in range", () => {
    const d = parseEngineConfig();
    expect([d.maxInFlight, d.maxInFlightBytes, d.maxQueuedEvents, d.maxAlignmentBytes, d.checkpointTimeoutMs]).toEqual([
      4096,
      64 * 1024 * 1024,
      65_536,
      64 * 1024 * 1024,
      60_000,
    ]);
    const c = parseEngineConfig({
      file: { engine: { maxInFlightBytes: 8 * 1024 * 1024, maxQueuedEvents: 1000, checkpointTimeout: "2m" } },
      env: { TIDEMARK_MAX_QUEUED_EVENTS: "2000", TIDEMARK_MAX_ALIGNMENT_BYTES: "2097152" },
      flags: { "max-in-flight-bytes": "4194304" },
    });
    expect([c.maxInFlightBytes, c.maxQueuedEvents, c.maxAlignmentBytes, c.checkpointTimeoutMs]).toEqual([
      4 * 1024 * 1024,
      2000,
      2 * 1024 * 1024,
      120_000,
    ]);
    expect(() => parseEngineConfig({ flags: { "max-in-flight-bytes": "1000" } })).toThrow(
      /--max-in-flight-bytes must be a whole number from 1048576/,
    );
    expect(() => parseEngineConfig({ env: { TIDEMARK_MAX_QUEUED_EVENTS: "0" } })).toThrow(/TIDEMARK_MAX_QUEUED_EVENTS/);
    expect(() => parseEngineConfig({ flags: { "checkpoint-timeout": "10ms" } })).toThrow(/at least 1000 ms/);
  });

  it("compressPanes: off by default; on by flag, env or file", () => {
    expect(parseEngineConfig().compressPanes).toBe(false);
    expect(parseEngineConfig({ flags: { "compress-panes": "on" } }).compressPanes).toBe(true);
    expect(parseEngineConfig({ env: { TIDEMARK_COMPRESS_PANES: "1" } }).compressPanes).toBe(true);
    expect(parseEngineConfig({ file: { engine: { compressPanes: true } } }).compressPanes).toBe(true);
    expect(parseEngineConfig({ flags: { "compress-panes": "off" } }).compressPanes).toBe(false);
    expect(() => parseEngineConfig({ flags: { "compress-panes": "maybe" } })).toThrow(/--compress-panes/);
  });

  it("sessions: off by default; on by flag, env or file, with gap and cap layered like the rest", () => {
    expect(parseEngineConfig().sessions).toBeNull();
    expect(parseEngineConfig({ flags: { sessions: "true" } }).sessions).toEqual({
      gapMs: 60_000,
      maxLengthMs: 4 * 3_600_000,
      maxKeys: 1_000_000,
    });
    const file = { engine: { sessions: { enabled: true, gap: "2m", maxLength: "1h", maxKeys: 5000 } } };
    expect(parseEngineConfig({ file }).sessions).toEqual({
      gapMs: 120_000,
      maxLengthMs: 3_600_000,
      maxKeys: 5000,
    });
    expect(parseEngineConfig({ file, env: { TIDEMARK_SESSION_MAX_KEYS: "70" } }).sessions?.maxKeys).toBe(70);
    expect(parseEngineConfig({ file, flags: { "session-max-keys": "9" } }).sessions?.maxKeys).toBe(9);
    expect(() => parseEngineConfig({ flags: { "session-max-keys": "many" } })).toThrow(/--session-max-keys: /);
    expect(() =>
      parseEngineConfig({ file: { engine: { sessions: { metricsWindow: "1m" } } }, fileName: "t.json" }),
    ).toThrow(/t.json: engine.sessions.metricsWindow/);
    const env = { TIDEMARK_SESSIONS: "1", TIDEMARK_SESSION_GAP: "30s" };
    expect(parseEngineConfig({ file, env }).sessions?.gapMs).toBe(30_000);
    expect(
      parseEngineConfig({ file, env, flags: { "session-gap": "10s", "session-max-length": "2h" } }).sessions,
    ).toMatchObject({ gapMs: 10_000, maxLengthMs: 7_200_000 });
    expect(parseEngineConfig({ file, env: { TIDEMARK_SESSIONS: "off" } }).sessions).toBeNull();
    expect(parseEngineConfig({ env, flags: { sessions: "false" } }).sessions).toBeNull();
  });

  it("sessions: a bad setting names where it came from, even with sessions off", () => {
    expect(() => parseEngineConfig({ flags: { "session-gap": "soon" } })).toThrow(/--session-gap: /);
    expect(() => parseEngineConfig({ env: { TIDEMARK_SESSION_MAX_LENGTH: "10s" } })).toThrow(
      /TIDEMARK_SESSION_MAX_LENGTH: must be at least the gap/,
    );
    expect(() => parseEngineConfig({ flags: { "session-gap": "5h" } })).toThrow(
      /the default maxLength \(set --session-max-length, TIDEMARK_SESSION_MAX_LENGTH or engine.sessions.maxLength\): must be at least the gap/,
    );
    expect(() => parseEngineConfig({ file: { engine: { sessions: { gap: 0 } } }, fileName: "t.json" })).toThrow(
      /t.json: engine.sessions.gap: /,
    );
    expect(() => parseEngineConfig({ file: { engine: { sessions: { gapp: "1m" } } }, fileName: "t.json" })).toThrow(
      /t.json: engine.sessions.gapp must be one of the known keys/,
    );
    expect(() => parseEngineConfig({ file: { engine: { sessions: true } }, fileName: "t.json" })).toThrow(
      /t.json: engine.sessions must be an object/,
    );
    expect(() => parseEngineConfig({ flags: { sessions: "maybe" } })).toThrow(/--sessions must be on or off/);
    try {
      parseEngineConfig({ flags: { "session-gap": "-1s" } });
      expect.unreachable();
    } catch (err) {
      expect((err as { code: string }).code).toBe("TM_ENGINE_BAD_CONFIG");
    }
  });

  it("reads partitionBy from the top level, env or flag, and refuses it by route with sessions or without partials", () => {
    expect(parseEngineConfig().partitionBy).toBe("service");
    expect(parseEngineConfig({ file: { partitionBy: "service+route" } }).partitionBy).toBe("service+route");
    expect(parseEngineConfig({ env: { TIDEMARK_PARTITION_BY: "service+route" } }).partitionBy).toBe("service+route");
    expect(parseEngineConfig({ flags: { "partition-by": "service+route" } }).partitionBy).toBe("service+route");
    expect(() => parseEngineConfig({ file: { partitionBy: "route" }, fileName: "t.json" })).toThrow(
      /t.json: partitionBy must be one of "service", "service\+route", got "route"/,
    );
    expect(() =>
      parseEngineConfig({ file: { partitionBy: "service+route" }, flags: { sessions: "on" }, fileName: "t.json" }),
    ).toThrow(
      /t.json: partitionBy must be "service" while session windows are on \(engine.sessions.enabled, --sessions\)/,
    );
    expect(() => parseEngineConfig({ flags: { "partition-by": "service+route", partials: "off" } })).toThrow(
      /--partition-by must be "service" while partials are off/,
    );
  });

  it("partition lists round-trip through their compact form", () => {
    expect(parsePartitionList("6, 0-3 ,2", 8)).toEqual([0, 1, 2, 3, 6]);
    expect(formatPartitionList([0, 1, 2, 3, 6])).toBe("0-3_6");
    expect(() => parsePartitionList("3-1", 8)).toThrow(/runs backwards/);
  });
});

describe("merge partitions (docs/decisions/0033-merge-partitions.md)", () => {
  it("reads mergePartitions from the file, the env and the flags; a merge operator's partition below it", async () => {
    const { parseMergeConfig } = await import("./merge-config.js");
    expect(parseEngineConfig({}).mergePartitions).toBe(1);
    expect(parseEngineConfig({ file: { mergePartitions: 3 } }).mergePartitions).toBe(3);
    expect(parseEngineConfig({ env: { TIDEMARK_MERGE_PARTITIONS: "2" } }).mergePartitions).toBe(2);
    expect(() => parseEngineConfig({ flags: { "merge-partitions": "0" } })).toThrow(
      /--merge-partitions must be a whole number from 1 to 64/,
    );
    const m = parseMergeConfig({ file: { mergePartitions: 2 }, flags: { "merge-partition": "1" } });
    expect({ id: m.worker, partition: m.mergePartition }).toEqual({ id: "merge-1", partition: 1 });
    expect(parseMergeConfig({}).worker).toBe("merge-0");
    expect(() => parseMergeConfig({ file: { mergePartitions: 2 }, flags: { "merge-partition": "2" } })).toThrow(
      /--merge-partition must be below mergePartitions \(2\)/,
    );
    expect(() => parseMergeConfig({ env: { TIDEMARK_MERGE_PARTITION: "x" } })).toThrow(
      /TIDEMARK_MERGE_PARTITION must be a whole number/,
    );
  });
});
