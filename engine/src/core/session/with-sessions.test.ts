/** The window core and sessions as one StreamCore: same panes as driving both, restorable. */
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane } from "../../protocol.js";
import type { CoreFactory } from "../../runtime/worker/start-engine.js";
import { createCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { CoreError } from "../errors.js";
import { simulate } from "../simulation.js";
import { SNAPSHOT_CAPTURED, type CoreConfig, type CoreOutput } from "../types.js";
import { createSessionOperator, withSessions } from "./index.js";

const SESSIONS = { gap: "20s" };

function config(): CoreConfig {
  return { ...defaultCoreConfig(), partitions: 2 };
}

function recorder(): { out: CoreOutput; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: { pane: (p: Pane) => lines.push(JSON.stringify(p)), late: (r: LateRecord) => lines.push(JSON.stringify(r)) },
  };
}

const events = simulate({ seed: 9, events: 1_500, services: 3, users: 40 });
const partition = (service: string): number => (service === "a" ? 0 : 1);

describe("withSessions", { timeout: 30_000 }, () => {
  it("emits exactly what the core and the session operator emit when both are fed each input", () => {
    const a = recorder();
    const factory: CoreFactory = withSessions(SESSIONS);
    const combined = factory.create(config());
    const b = recorder();
    const core = createCore(config());
    const sessions = createSessionOperator(config(), SESSIONS);
    for (const e of events) {
      combined.event(partition(e.service), e, a.out);
      core.event(partition(e.service), e, b.out);
      sessions.event(partition(e.service), e, b.out);
    }
    combined.finish(a.out);
    core.finish(b.out);
    sessions.finish(b.out);
    expect(a.lines.some((l) => l.includes('"sessions":{'))).toBe(true);
    expect(a.lines.some((l) => !l.includes('"sessions":{'))).toBe(true);
    expect(a.lines).toEqual(b.lines);
    expect(withSessions(SESSIONS).create(config()).status().sessions.openSessions).toBe(0);
  });

  it("restores midway from its own snapshot with byte-identical output, and refuses a plain core snapshot", () => {
    const straight = recorder();
    const s = withSessions(SESSIONS);
    const x = s.create(config());
    for (const e of events) x.event(partition(e.service), e, straight.out);
    x.finish(straight.out);

    const resumed = recorder();
    const half = Math.floor(events.length / 2);
    let y = s.create(config());
    for (const e of events.slice(0, half)) y.event(partition(e.service), e, resumed.out);
    const bytes = y.snapshot();
    y = s.restore(config(), bytes);
    expect(y.snapshot()).toEqual(bytes);
    for (const e of events.slice(half)) y.event(partition(e.service), e, resumed.out);
    y.finish(resumed.out);
    expect(resumed.lines).toEqual(straight.lines);

    const plain = createCore(config()).snapshot();
    let code: string | undefined;
    try {
      s.restore(config(), plain);
    } catch (e) {
      code = e instanceof CoreError ? e.code : String(e);
    }
    expect(code).toBe("TM_SNAPSHOT_CORRUPT");
  });
  it("a stepped snapshot keeps its cut while input and other snapshots come between its steps", () => {
    const factory: CoreFactory = withSessions(SESSIONS);
    const live = factory.create(config());
    const r = recorder();
    let at = 0;
    const feed = (n: number): void => {
      for (const e of events.slice(at, at + n)) live.event(partition(e.service), e, r.out);
      at = Math.min(events.length, at + n);
    };
    const stepsAfterCapture = (steps: Iterator<unknown, unknown>, between: () => void): unknown => {
      let captured = false;
      for (let s = steps.next(); ; s = steps.next()) {
        if (s.done) return s.value;
        if (s.value === SNAPSHOT_CAPTURED) captured = true;
        else if (captured) between();
      }
    };
    feed(700);
    const atCut = live.snapshot();
    // A dry run counts the steps after the capture, so the rest of the input spreads over all of them.
    let count = 0;
    stepsAfterCapture(live.snapshotSteps?.() as Iterator<unknown, unknown>, () => count++);
    expect(count).toBeGreaterThan(2);
    const per = Math.ceil((events.length - at) / count);
    // Between every two steps after the cut: more input, and a whole snapshot of the state then (its
    // capture must not take buffers the stepped one still reads), checked against a restore.
    const bytes = stepsAfterCapture(live.snapshotSteps?.() as Iterator<unknown, unknown>, () => {
      feed(per);
      const now = live.snapshot();
      expect(Buffer.from(factory.restore(config(), now).snapshot()).equals(now)).toBe(true);
    }) as Uint8Array;
    expect(at).toBe(events.length);
    expect(Buffer.from(bytes).equals(atCut)).toBe(true);
  });
});
