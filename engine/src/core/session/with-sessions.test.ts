/** The window core and sessions as one StreamCore: same panes as driving both, restorable. */
import { describe, expect, it } from "vitest";
import type { LateRecord, Pane } from "../../protocol.js";
import type { CoreFactory } from "../../runtime/worker/start-engine.js";
import { createCore } from "../create-core.js";
import { defaultCoreConfig } from "../default-config.js";
import { CoreError } from "../errors.js";
import { simulate } from "../simulation.js";
import type { CoreConfig, CoreOutput } from "../types.js";
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
});
