import { describe, expect, it } from "vitest";
import { parseFlags } from "../args.js";
import { LOAD_DEFAULTS, readLoadOptions } from "./load-options.js";

const read = (argv: string[], env: NodeJS.ProcessEnv = {}) => readLoadOptions(parseFlags(argv), env);

describe("readLoadOptions", () => {
  it("has sensible defaults, the token from TIDEMARK_INGEST_TOKENS when --token is absent", () => {
    expect(read([], { TIDEMARK_INGEST_TOKENS: " first-token , second" })).toEqual({
      ...LOAD_DEFAULTS,
      token: "first-token",
      nats: undefined,
      accepted: undefined,
      record: undefined,
    });
    expect(read(["--token", "mine"], { TIDEMARK_INGEST_TOKENS: "env" }).token).toBe("mine");
    expect(read([]).token).toBeUndefined();
  });

  it("reads durations as 500ms, 10s, 1m and every other flag", () => {
    const o = read(
      ["--rate", "5000", "--duration", "1m", "--window", "500ms", "--services", "3", "--routes=2", "--users", "50"],
      {},
    );
    expect(o).toMatchObject({ rate: 5000, durationMs: 60_000, windowMs: 500, services: 3, routes: 2, users: 50 });
    const more = read(["--senders", "8", "--batch", "100", "--seed", "9", "--corr", "0.5", "--nats", "nats://h:1"]);
    expect(more).toMatchObject({ senders: 8, batch: 100, seed: 9, corr: 0.5, nats: "nats://h:1" });
    expect(read(["--ingest", "http://10.0.0.1:4318/"]).ingest).toBe("http://10.0.0.1:4318");
    expect(readLoadOptions(parseFlags([]), {}, "nats://from-config:4222").nats).toBe("nats://from-config:4222");
  });

  it.each([
    [["--rate", "fast"], /--rate must be a number from 1 to 1000000, got "fast": write e\.g\. --rate 5000/],
    [["--duration", "0"], /--duration must be at least 1ms: write e\.g\. --duration 30s/],
    [["--duration", "soon"], /--duration must be a duration such as "500ms", "10s", "1m".*got "soon"/],
    [["--users", "1.5"], /--users must be a whole number/],
    [["--corr", "2"], /--corr must be a number from 0 to 1, got 2/],
    [["--window", "0s"], /--window must be at least 1ms/],
    [["--ingest", "localhost:4318"], /--ingest must be an http\(s\) URL, got "localhost:4318"/],
    [["--nats", "127.0.0.1:4222"], /--nats must be a nats:\/\/ URL/],
    [["--batch"], /--batch needs a value: write e\.g\. --batch 500/],
  ])("refuses %j with TM_CLI_BAD_FLAG naming the flag", (argv, message) => {
    expect(() => read(argv)).toThrow(message);
    try {
      read(argv);
    } catch (err) {
      expect((err as { code?: string }).code).toBe("TM_CLI_BAD_FLAG");
    }
  });
});
