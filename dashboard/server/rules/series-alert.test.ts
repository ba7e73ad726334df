import { describe, expect, it } from "vitest";
import { SeriesAlert, type Transition, type Verdict } from "./series-alert.js";

const STALE = 300_000;

/** A verdict of the window ending at `end` s: crossed or not, early or settled; log time 2 s after the end. */
function v(endS: number, crossed: boolean, settled: boolean, atS = endS + 2): Verdict {
  return { end: endS * 1000, crossed, settled, at: atS * 1000 };
}
const kinds = (ts: Array<Transition<Verdict> | undefined>): string[] => ts.map((t) => t?.kind ?? "-");

describe("SeriesAlert: pending, firing, retracted, resolved", () => {
  it("fires at once on an early crossing with for 0s, and resolves on a later settled window below", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    const ts = [a.record(v(10, true, false)), a.record(v(10, true, true)), a.record(v(20, false, true))];
    expect(kinds(ts)).toEqual(["fired", "-", "resolved"]);
    expect(a.state).toBe("inactive");
    expect(ts[2]).toMatchObject({ by: v(20, false, true), at: 22_000 });
  });

  it("retracts an alert raised on an early pane when the on-time pane of that window does not cross", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    expect(a.record(v(10, true, false))?.kind).toBe("fired");
    expect(a.firedAt).toBe(12_000);
    const t = a.record(v(10, false, true, 14));
    expect(t?.kind).toBe("retracted");
    expect(a.state).toBe("inactive");
  });

  it("retracts when every early window that raised it is contradicted, not before", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    expect(kinds([a.record(v(10, true, false)), a.record(v(20, true, false))])).toEqual(["fired", "-"]);
    // The first window settles below: the second (still early, crossing) keeps it firing.
    expect(a.record(v(10, false, true))).toBeUndefined();
    expect(a.state).toBe("firing");
    expect(a.record(v(20, false, true))?.kind).toBe("retracted");
  });

  it("resolves rather than retracts when a window that raised it settled above", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    a.record(v(10, true, true));
    a.record(v(20, true, false));
    expect(a.record(v(20, false, true))?.kind).toBe("resolved");
  });

  it("resolves rather than retracts when a newer window ends it", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    a.record(v(10, true, false));
    // Window 20 settles below before window 10 did: window 10 still crosses on its early pane only,
    // but the newest settled word is below, so the alert ends; 20 did not raise it: resolved.
    expect(a.record(v(20, false, true))?.kind).toBe("resolved");
  });

  it("never ends an alert on an early pane below the threshold", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    a.record(v(10, true, true));
    expect(a.record(v(20, false, false))).toBeUndefined();
    expect(a.state).toBe("firing");
    expect(a.record(v(20, false, true))?.kind).toBe("resolved");
  });

  it("is pending until the crossing windows span `for`, counted between window ends", () => {
    const a = new SeriesAlert<Verdict>(20_000, STALE);
    const ts = [a.record(v(10, true, true)), a.record(v(20, true, true)), a.record(v(30, true, true))];
    expect(kinds(ts)).toEqual(["pending", "-", "fired"]);
    expect(a.activeAt).toBe(12_000);
    expect(a.firedAt).toBe(32_000);
  });

  it("drops a pending alert silently when a settled window does not cross", () => {
    const a = new SeriesAlert<Verdict>(20_000, STALE);
    expect(a.record(v(10, true, false))?.kind).toBe("pending");
    expect(a.record(v(10, false, true))?.kind).toBe("dropped");
    expect(a.state).toBe("inactive");
  });

  it("starts `for` again after a break", () => {
    const a = new SeriesAlert<Verdict>(10_000, STALE);
    expect(kinds([a.record(v(10, true, true)), a.record(v(20, false, true)), a.record(v(30, true, true))])).toEqual([
      "pending",
      "dropped",
      "pending",
    ]);
    expect(a.record(v(40, true, true))?.kind).toBe("fired");
  });

  it("does not join windows further apart than staleMs into one run", () => {
    const a = new SeriesAlert<Verdict>(10_000, 60_000);
    a.record(v(10, true, true));
    expect(a.record(v(100, true, true))).toBeUndefined();
    expect(a.state).toBe("pending");
    expect(a.record(v(110, true, true))?.kind).toBe("fired");
  });

  it("resolves a firing alert whose series went silent for staleMs, and never takes its old windows again", () => {
    const a = new SeriesAlert<Verdict>(0, 60_000);
    a.record(v(10, true, true));
    expect(a.expire(60_000, 61_000)).toBeUndefined();
    const t = a.expire(70_000, 71_000);
    expect(t).toMatchObject({ kind: "resolved", by: "stale", at: 71_000 });
    expect(a.record(v(10, true, true))).toBeUndefined();
    expect(a.state).toBe("inactive");
    expect(a.record(v(80, true, true))?.kind).toBe("fired");
  });

  it("fires again when a late pane shows a retracted window crossed after all", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    a.record(v(10, true, false));
    expect(a.record(v(10, false, true))?.kind).toBe("retracted");
    expect(a.record(v(10, true, true))?.kind).toBe("fired");
  });
});

describe("SeriesAlert: an early pane never ends an alert", () => {
  it("keeps the crossing of a window whose newer early pane is below, until its settled pane", () => {
    const a = new SeriesAlert<Verdict>(0, STALE);
    a.record(v(10, true, false));
    expect(a.record(v(10, false, false, 13))).toBeUndefined();
    expect(a.state).toBe("firing");
    expect(a.record(v(10, false, true, 14))?.kind).toBe("retracted");
  });
});
