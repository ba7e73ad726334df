import { describe, expect, it } from "vitest";
import type { Pane } from "../../protocol.js";
import { capture, feed } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { simulate, SIMULATION_START_MS } from "../simulation.js";
import type { AccumulationMode, CoreConfig } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";

const LAG = 10_000;
const GRACE = 30_000;
const START = SIMULATION_START_MS + 120_000;
const END = START + 60_000;
const events = simulate({ seed: 11, events: 6000, services: 1, spanMs: 600_000, tail: 0.1, corr: 0.3 });

function config(mode: AccumulationMode): CoreConfig {
  return validateCoreConfig({
    partitions: 1,
    windows: ["60s"],
    policies: [
      {
        name: "p",
        watermark: { kind: "arrival-lag", lag: LAG },
        grace: GRACE,
        earlyEvery: "5s",
        lateEvery: "1s",
        mode,
      },
    ],
  });
}

function panesOfWindow(mode: AccumulationMode): Pane[] {
  const out = capture();
  const core = createCore(config(mode));
  feed(core, events, out, 1);
  core.finish(out);
  return out.panes.filter((p) => p.window.start === START && p.key.route === undefined);
}

/** Independent count: events of the window that arrive while W = ingest − lag < end + grace. */
const truthKept = events.filter((e) => e.ts >= START && e.ts < END && e.ingest_ts - LAG < END + GRACE);
const keptErrors = truthKept.filter((e) => e.status >= 500).length;

describe("triggers and accumulation modes for one window", () => {
  it("accumulating: early… on-time, late…, final with non-decreasing values ending at the kept count", () => {
    const panes = panesOfWindow("accumulating");
    const kinds = panes.map((p) => p.kind[0]).join("");
    expect(kinds).toMatch(/^e+ol+f$/);
    const counts = panes.map((p) => p.value.count);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1] as number);
    expect(panes.at(-1)?.value.count).toBe(truthKept.length);
    expect(panes.at(-1)?.value.errors).toBe(keptErrors);
    expect(panes.map((p) => p.seq)).toEqual(panes.map((_, i) => i));
    const onTime = panes.find((p) => p.kind === "on-time") as Pane;
    expect(onTime.emittedAt).toBeGreaterThanOrEqual(END + LAG);
    expect(onTime.value.count).toBe(
      events.filter((e) => e.ts >= START && e.ts < END && e.ingest_ts - LAG < END).length,
    );
  });

  it("discarding: the panes are deltas that sum to the final value", () => {
    const panes = panesOfWindow("discarding");
    expect(panes.length).toBeGreaterThan(5);
    expect(panes.reduce((s, p) => s + p.value.count, 0)).toBe(truthKept.length);
    expect(panes.reduce((s, p) => s + p.value.errors, 0)).toBe(keptErrors);
  });

  it("retracting: applied to an upsert table (or as signed sums) the output equals the final value", () => {
    const panes = panesOfWindow("retracting");
    expect(panes.some((p) => p.kind === "retract")).toBe(true);
    const table = new Map<string, Pane>();
    for (const p of panes) if (p.kind !== "retract" && (table.get(p.id)?.seq ?? -1) < p.seq) table.set(p.id, p);
    expect([...table.values()].map((p) => p.value.count)).toEqual([truthKept.length]);
    const signed = panes.reduce((s, p) => s + (p.kind === "retract" ? -p.value.count : p.value.count), 0);
    expect(signed).toBe(truthKept.length);
    // every retract carries exactly the value of the pane it withdraws
    panes.forEach((p, i) => {
      if (p.kind === "retract") expect(p.value).toEqual(panes[i - 1]?.value);
    });
  });

  it("final-only: exactly one pane per window and key", () => {
    const panes = panesOfWindow("final-only");
    expect(panes.map((p) => [p.kind, p.value.count])).toEqual([["final", truthKept.length]]);
  });

  it("the classic bug: a sink that adds accumulating panes is wrong, an upsert sink is right", () => {
    const panes = panesOfWindow("accumulating");
    const plusEquals = panes.reduce((s, p) => s + p.value.count, 0);
    const upsert = new Map<string, number>();
    for (const p of panes) upsert.set(p.id, p.value.count);
    expect(upsert.get(panes[0]?.id as string)).toBe(truthKept.length);
    // += multiplies the value by roughly the number of panes: many times the truth.
    expect(plusEquals).toBeGreaterThan(3 * truthKept.length);
  });

  it("replaying the same input emits the same (id, seq) panes, so an idempotent sink absorbs a replay", () => {
    expect(JSON.stringify(panesOfWindow("retracting"))).toBe(JSON.stringify(panesOfWindow("retracting")));
  });
});
