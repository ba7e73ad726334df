import { describe, expect, it } from "vitest";
import { ENGINE_NODE_FLAGS, missingEngineNodeFlags } from "./node-flags.js";

describe("missingEngineNodeFlags", () => {
  it("names every flag a process was started without", () => {
    expect(missingEngineNodeFlags([], "")).toEqual([...ENGINE_NODE_FLAGS]);
    expect(missingEngineNodeFlags(["--expose-gc"], "--enable-source-maps")).toEqual([...ENGINE_NODE_FLAGS]);
  });

  it("finds them on the command line or in NODE_OPTIONS", () => {
    expect(missingEngineNodeFlags([...ENGINE_NODE_FLAGS], "")).toEqual([]);
    expect(missingEngineNodeFlags(["--expose-gc"], ` ${ENGINE_NODE_FLAGS.join(" ")} --enable-source-maps`)).toEqual([]);
  });
});
