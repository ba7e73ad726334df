import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ESLint } from "eslint";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");

async function lintAs(text: string, filePath: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(text, { filePath: `${root}${filePath}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe("lint boundary of the pure core", () => {
  for (const where of ["engine/src/core/impure.ts", "sketches/src/impure.ts"]) {
    it(`rejects node:*, bare built-ins, NATS, fastify, Date.now, new Date() and process.env in ${where}`, async () => {
      const messages = await lintAs(fixture("impure-core.ts"), where);
      const restricted = messages.filter((m) => m.startsWith("no-restricted"));
      expect(restricted.filter((m) => m.includes("no Node built-ins"))).toHaveLength(2);
      expect(restricted.some((m) => m.includes("no NATS"))).toBe(true);
      expect(restricted.some((m) => m.includes("no fastify"))).toBe(true);
      expect(restricted.some((m) => m.includes("no Date.now()"))).toBe(true);
      expect(restricted.some((m) => m.includes("no new Date()"))).toBe(true);
      expect(restricted.some((m) => m.includes("no process.env"))).toBe(true);
    });
  }

  it("allows the same code in an adapter (engine/src/runtime)", async () => {
    const messages = await lintAs(fixture("impure-core.ts"), "engine/src/runtime/impure.ts");
    expect(messages.filter((m) => m.startsWith("no-restricted"))).toEqual([]);
  });

  it("passes a pure module in the core", async () => {
    expect(await lintAs(fixture("pure-core.ts"), "engine/src/core/pure.ts")).toEqual([]);
  });
});
