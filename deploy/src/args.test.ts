import { describe, expect, it } from "vitest";
import { parseFlags } from "./args.js";
import { DeployError } from "./errors.js";

describe("parseFlags", () => {
  it("reads --k v, --k=v, bare booleans, --no-x and repeated flags", () => {
    const f = parseFlags(
      ["--port", "4318", "--host=0.0.0.0", "--policy", "2s+0s", "--policy", "10s+30s", "--no-demo", "--json", "file"],
      ["json"],
    );
    expect(f.int("port", 1)).toBe(4318);
    expect(f.get("host")).toBe("0.0.0.0");
    expect(f.all("policy")).toEqual(["2s+0s", "10s+30s"]);
    expect(f.bool("demo", true)).toBe(false);
    expect(f.bool("json", false)).toBe(true);
    expect(f.positional).toEqual(["file"]);
  });
  it("names the flag and the allowed range on a bad number", () => {
    const f = parseFlags(["--port", "http"]);
    expect(() => f.int("port", 1, 1, 65535)).toThrow(/--port must be a whole number from 1 to 65535, got "http"/);
  });
  it("says what to pass when a required flag is missing", () => {
    try {
      parseFlags([]).required("input", "a recording, e.g. --input rec.ndjson");
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DeployError);
      expect((err as DeployError).code).toBe("TM_CLI_MISSING_FLAG");
      expect((err as DeployError).message).toContain("--input is required");
    }
  });
});
