import { describe, expect, it } from "vitest";
import { HoldWatch } from "../status/hold-watch.js";
import { InputHold } from "./input-hold.js";
import { OutputGate } from "./output-gate.js";

describe("InputHold", () => {
  it("counts the held time, the hold in progress included, by the stream that held it", () => {
    let now = 1_000;
    const h = new InputHold(() => now);
    expect([h.current(), h.totalMs(), h.lastCause]).toEqual([null, 0, null]);
    h.start("TM_PANES");
    now += 300;
    h.start("TM_PARTIALS"); // a hold in progress goes on
    expect(h.current()).toEqual({ cause: "TM_PANES", heldMs: 300 });
    now += 200;
    h.end();
    now += 1_000;
    h.end();
    expect([h.current(), h.totalMs(), h.lastMs, h.holds]).toEqual([null, 500, 500, 1]);
    h.start("TM_PARTIALS");
    now += 50;
    expect([h.totalMs(), h.lastCause]).toEqual([550, "TM_PARTIALS"]);
  });
});

describe("HoldWatch", () => {
  it("reports a window held half the time or more, at most every 30 s, and the first window after it", () => {
    const w = new HoldWatch();
    const seen: string[] = [];
    let held = 0;
    // 0–30 s: 90 % held; 30–60 s: 40 %; 60–70 s: 100 %.
    for (let t = 0; t <= 70_000; t += 1_000) {
      const n = w.observe(t, held, "TM_PANES");
      if (n) seen.push(`${t / 1000} ${n.kind} ${Math.round(n.share * 100)}`);
      held += t < 30_000 ? 900 : t < 60_000 ? 400 : 1_000;
    }
    expect(seen).toEqual(["10 held 90", "40 flowing 40", "70 held 100"]);
  });
});

describe("OutputGate", () => {
  it("shuts while an output is saturated, holds the input against it, and opens once it has room", async () => {
    let now = 0;
    let opened = 0;
    let free: () => void = () => undefined;
    const panes = { saturated: false, room: () => new Promise<void>((r) => (free = r)) };
    const partials = { saturated: false, room: () => Promise.resolve() };
    const outputs = [
      { cause: "TM_PANES" as const, out: panes },
      { cause: "TM_PARTIALS" as const, out: partials },
    ];
    const g = new OutputGate(
      outputs,
      () => now,
      () => opened++,
    );
    expect(g.blocked()).toBeUndefined();
    panes.saturated = true;
    const shut = g.blocked();
    expect(shut).toBeDefined();
    expect(g.blocked()).toBe(shut);
    now = 700;
    expect(g.hold.current()).toEqual({ cause: "TM_PANES", heldMs: 700 });
    panes.saturated = false;
    free();
    await shut;
    expect([g.blocked(), g.hold.totalMs(), opened]).toEqual([undefined, 700, 1]);
  });
});
