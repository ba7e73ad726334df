import { describe, expect, it } from "vitest";
import { envLayer, fileLayer, flagLayer, resolveRemoteWriteConfig } from "./remote-write-config.js";

const base = { nats: "nats://127.0.0.1:4222", dataDir: "data", policies: [] };

describe("remote-write config (docs/remote-write.md, Configuration)", () => {
  it("layers defaults < file < env < flags", () => {
    const file = fileLayer({ url: "http://file:9090/api/v1/write", batchSize: 10, timeout: "5s" }, "t.json");
    const env = envLayer({ TIDEMARK_REMOTE_WRITE_URL: "http://env:9090/api/v1/write" });
    const flags = flagLayer((f) => ({ "batch-size": "20" })[f]);
    const c = resolveRemoteWriteConfig(base, file, env, flags);
    expect([c.url, c.batchSize, c.timeoutMs, c.maxBackoffMs]).toEqual(["http://env:9090/api/v1/write", 20, 5000, 5000]);
  });

  it("names the field and what it takes", () => {
    const url = { url: "http://r:9090/api/v1/write" };
    expect(() => resolveRemoteWriteConfig(base, url, { batchSize: "many" })).toThrow(
      'remote-write: batchSize must be a whole number from 1 to 100000, got "many"',
    );
    expect(() => resolveRemoteWriteConfig(base, url, { timeoutMs: "soon" })).toThrow(
      /^remote-write: timeout must be a duration such as "500ms".*got "soon"$/,
    );
    expect(() => resolveRemoteWriteConfig(base, url, { consumer: "a b" })).toThrow(
      /remote-write: consumer must be letters, digits, _ and - only/,
    );
    expect(() => resolveRemoteWriteConfig(base)).toThrow(/remote-write: url must be the receiver's remote-write URL/);
  });
});
