import { describe, expect, it } from "vitest";
import {
  ConfigFieldError,
  CORE_KEYS,
  SECRET_VALUE,
  coreSettingsOf,
  duration,
  integer,
  list,
  number,
  oneOf,
  onOff,
  optionalPath,
  readSetting,
  settingOf,
  text,
  url,
  type ConfigSources,
  type SettingNames,
} from "./index.js";
import { validateCoreConfig } from "../core/index.js";

const names: SettingNames = {
  field: "engine.checkpointEvery",
  file: "engine.checkpointEvery",
  env: ["TIDEMARK_CHECKPOINT_EVERY"],
  flag: "checkpoint-every",
};
const file = { engine: { checkpointEvery: "2s" } };
const env = { TIDEMARK_CHECKPOINT_EVERY: "3s" };
const flags = { "checkpoint-every": "4s" };

function errorOf(fn: () => unknown): ConfigFieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigFieldError) return err;
    throw err;
  }
  throw new Error("expected a ConfigFieldError");
}

describe("layers: defaults < file < env < flags", () => {
  const read = (src: ConfigSources) => readSetting(names, { fileName: "t.json", ...src }, duration(1), 5000);
  it("the default when no layer sets the field", () => expect(read({})).toBe(5000));
  it("the file over the default", () => expect(read({ file })).toBe(2000));
  it("the environment over the file", () => expect(read({ file, env })).toBe(3000));
  it("a flag over the environment", () => expect(read({ file, env, flags })).toBe(4000));
  it("a flag over the file without the environment", () => expect(read({ file, flags })).toBe(4000));
  it("an empty variable is unset unless the role says otherwise; the first variable named wins", () => {
    expect(read({ file, env: { TIDEMARK_CHECKPOINT_EVERY: "" } })).toBe(2000);
    const two = { ...names, env: ["TIDEMARK_NATS_URL", "TIDEMARK_NATS"] };
    expect(settingOf(two, { env: { TIDEMARK_NATS: "b", TIDEMARK_NATS_URL: "a" } })?.value).toBe("a");
    expect(settingOf(two, { env: { TIDEMARK_NATS: "b" } })?.source).toEqual({ kind: "env", name: "TIDEMARK_NATS" });
    expect(settingOf(names, { env: { TIDEMARK_CHECKPOINT_EVERY: "" } }, { blankEnvIsUnset: false })?.value).toBe("");
  });
});

describe("errors name the field and the source of its value", () => {
  const read = (src: ConfigSources) => readSetting(names, { fileName: "t.json", ...src }, duration(1), 5000);
  it("from a variable", () => {
    const e = errorOf(() => read({ env: { TIDEMARK_CHECKPOINT_EVERY: "5x" } }));
    expect(e.message).toBe(
      'engine.checkpointEvery from TIDEMARK_CHECKPOINT_EVERY must be a duration such as "500ms", "10s", "1m", "1h" or a number of milliseconds (at least 1 ms), got "5x"',
    );
    expect([e.code, e.field, e.source.kind, e.got]).toEqual([
      "TM_CONFIG_INVALID",
      "engine.checkpointEvery",
      "env",
      "5x",
    ]);
  });
  it("from a flag", () => {
    expect(errorOf(() => read({ file, flags: { "checkpoint-every": "soon" } })).message).toMatch(
      /^engine\.checkpointEvery from --checkpoint-every must be a duration/,
    );
  });
  it("from the file, by its path in the file", () => {
    expect(errorOf(() => read({ file: { engine: { checkpointEvery: [] } } })).message).toMatch(
      /^t\.json: engine\.checkpointEvery must be a duration .*, got \[\]$/,
    );
  });
  it("leaves a secret's value out of the message", () => {
    const e = new ConfigFieldError(
      "ingest.tokens",
      { kind: "env", name: "TIDEMARK_INGEST_TOKENS" },
      "tokens",
      SECRET_VALUE,
    );
    expect(e.message).toBe(
      "ingest.tokens from TIDEMARK_INGEST_TOKENS must be tokens (the value is a secret, not shown)",
    );
  });
  it("a bad value in a weaker layer is an error even when a stronger layer sets the field", () => {
    expect(errorOf(() => read({ file: { engine: { checkpointEvery: "bad" } }, env, flags })).message).toMatch(
      /^t\.json: engine\.checkpointEvery must be a duration/,
    );
    expect(errorOf(() => read({ env: { TIDEMARK_CHECKPOINT_EVERY: "bad" }, flags })).source.kind).toBe("env");
  });
});

describe("field readers", () => {
  const at = { kind: "flag", name: "--x" } as const;
  const bad = (fn: () => unknown): string => errorOf(fn).requirement;
  it("integer: whole numbers in range, from strings or JSON numbers", () => {
    const r = integer(1, 64);
    expect([r("8", "x", at), r(64, "x", at)]).toEqual([8, 64]);
    for (const v of ["0", "65", "1.5", "", " ", "8x", null, true])
      expect(() => r(v, "x", at)).toThrow(ConfigFieldError);
    expect(bad(() => r("65", "x", at))).toBe('must be a whole number from 1 to 64, got "65"');
    // A JSON document's numbers are typed: "8" there is a string.
    expect(() => integer(1, 64, false)("8", "x", at)).toThrow(/got "8"/);
    expect(() => number(0, 1, false)("0.5", "x", at)).toThrow(/got "0.5"/);
  });
  it("number: finite numbers in range", () => {
    expect(number(0, 1)("0.25", "x", at)).toBe(0.25);
    expect(() => number(0, 1)("NaN", "x", at)).toThrow(/a number from 0 to 1/);
  });
  it("duration: units, bare milliseconds, the least allowed", () => {
    const r = duration(10);
    expect([r("500ms", "x", at), r("10s", "x", at), r("1m", "x", at), r("1h", "x", at), r(25, "x", at)]).toEqual([
      500, 10_000, 60_000, 3_600_000, 25,
    ]);
    expect(bad(() => r("5ms", "x", at))).toMatch(/at least 10 ms/);
    for (const v of ["5x", "-1s", "", {}, -3]) expect(() => r(v, "x", at)).toThrow(/must be a duration/);
  });
  it("oneOf, text, url, list, onOff, optionalPath", () => {
    expect(oneOf(["service", "service+route"])("service+route", "x", at)).toBe("service+route");
    expect(bad(() => oneOf(["service", "service+route"])("route", "x", at))).toBe(
      'must be one of "service", "service+route", got "route"',
    );
    expect(() => text(/^[a-z]+$/, "lower-case letters")("A", "x", at)).toThrow(/lower-case letters/);
    expect(() => text()("", "x", at)).toThrow(/a non-empty string/);
    const nats = url(["nats", "tls", "ws", "wss"], { several: true, what: "a NATS URL" });
    expect(nats("nats://a:1, tls://b:2", "x", at)).toBe("nats://a:1, tls://b:2");
    for (const v of ["http://a:1", "nats://a:1,,", "a:1", "nats://"])
      expect(() => nats(v, "x", at)).toThrow(/a NATS URL such as nats:/);
    expect(() => url(["nats"])("nats://a:1,nats://b:2", "x", at)).toThrow(ConfigFieldError);
    expect(list()(" a, ,b ", "x", at)).toEqual(["a", "b"]);
    expect(list()(["a"], "x", at)).toEqual(["a"]);
    expect(() => list()([1], "x", at)).toThrow(/a list of strings/);
    expect(["on", "YES", " 1 ", true].map((v) => onOff()(v, "x", at))).toEqual([true, true, true, true]);
    expect(["off", "No", "0", false].map((v) => onOff()(v, "x", at))).toEqual([false, false, false, false]);
    expect(() => onOff()("maybe", "x", at)).toThrow(/on or off/);
    expect([optionalPath()(null, "x", at), optionalPath()("", "x", at), optionalPath()("/a", "x", at)]).toEqual([
      null,
      null,
      "/a",
    ]);
    expect(() => optionalPath()(3, "x", at)).toThrow(/a file path/);
  });
});

describe("CORE_KEYS", () => {
  it("are exactly the top-level keys the core's validator reads (each changes the core config when set)", () => {
    const base = validateCoreConfig({});
    const changed: Record<string, unknown> = {
      policies: [{ name: "p", watermark: { kind: "arrival-lag", lag: "1s" }, grace: "0s" }],
      windows: ["30s"],
      referenceHorizon: "20m",
      biasWindows: 7,
      routeCapPerService: 11,
      serviceCap: 13,
      keyTtl: "2h",
      relativeAccuracy: 0.02,
      hllPrecision: 10,
    };
    expect(Object.keys(changed).sort()).toEqual([...CORE_KEYS].sort());
    for (const k of CORE_KEYS) expect(validateCoreConfig({ [k]: changed[k] }), k).not.toEqual(base);
    expect(coreSettingsOf({ windows: ["30s"], engine: {}, data: "d" })).toEqual({ windows: ["30s"] });
  });
});
