import { describe, expect, it } from "vitest";
import type { Pane } from "@tidemark/engine/protocol";
import { testPane, type PaneSpec } from "../../protocol/pane.fixture.js";
import { headlineSource, headlineValue, STALE_WINDOWS } from "./headline-source.js";
import { metricDef } from "./metrics.js";
import { nowcastOf } from "./nowcast.js";
import { PaneBook } from "./pane-book.js";

const W = 10_000;
const pane = (s: PaneSpec & { users?: number; p99?: number }): Pane => {
  const p = testPane({ windowMs: W, ...s });
  return { ...p, value: { ...p.value, users: s.users ?? p.value.users, p99: s.p99 ?? p.value.p99 } };
};
const f = { policy: "dashboard", windowMs: W, services: [] as string[] };

/** The panes as the app holds them, and what an "All services" headline (or one over `services`) reads. */
function headline(panes: Pane[], services: string[] = []) {
  const book = new PaneBook();
  book.apply(panes.map((pane, i) => ({ rev: i + 1, pane })));
  const filter = { ...f, services };
  return headlineSource(book.series(filter, 0, 1e9), book.allServices(filter, 0, 1e9), services.length === 0, W);
}

/** Service a and b each saw 100 distinct users in the window; 50 of them used both, so 150 in all. */
const SHARED = [
  pane({ service: "a", start: W, count: 600, errors: 6, users: 100, p99: 300 }),
  pane({ service: "b", start: W, count: 400, errors: 44, users: 100, p99: 900 }),
];
const STAR = pane({ service: "*", start: W, count: 1000, errors: 50, users: 150, p99: 850 });

describe("an All-services headline reads the engine's all-services pane", () => {
  it("shows the * pane's users (150), not the services' sum (200) the browser would make", () => {
    const users = metricDef("users");
    const merged = headline([...SHARED, STAR]);
    expect(merged).toMatchObject({ from: "engine", t: W, panes: [STAR], servicesAhead: false });
    expect(headlineValue(users, merged!)).toBe(150);
    // Without it (an older engine, no merge stage): today's sum, which counts the 50 shared users twice.
    const pooled = headline(SHARED);
    expect(pooled).toMatchObject({ from: "browser", t: W });
    expect(pooled?.panes.map((p) => p.key.service)).toEqual(["a", "b"]);
    expect(headlineValue(users, pooled!)).toBe(200);
  });

  it("reads every value from the * pane, none summed or maxed: count, error rate, p99", () => {
    const merged = headline([...SHARED, STAR])!;
    const pooled = headline(SHARED)!;
    expect(headlineValue(metricDef("requests"), merged)).toBe(100); // 1000 / 10 s, the * pane's count
    expect(headlineValue(metricDef("errorRate"), merged)).toBe(5);
    // The merged sketch's p99 of all requests (850), not the largest service's p99 (900).
    expect(headlineValue(metricDef("p99"), merged)).toBe(850);
    expect(headlineValue(metricDef("p99"), pooled)).toBe(900);
  });

  it("reads the * pane's bias, emit delay and nowcast as they are", () => {
    const nowcast = {
      value: { count: 1010, errorRate: 0.05, p99: 860, users: 155 },
      spread: { count: 5, errorRate: 0.002, p99: 10, users: 4 },
      error: { countPct: 0.1, errorRatePp: 0, p99Pct: 1, usersPct: 0.3, windows: 9 },
    };
    const bias = { countPct: 1, errorRatePp: -0.2, p99Pct: 2, usersPct: 3, windows: 9 };
    const star = { ...STAR, bias, emitDelayMs: 4000, nowcast };
    // The services' panes carry other biases and no nowcast: none of that is mixed in.
    const h = headline([...SHARED, star])!;
    expect(h.panes).toEqual([star]);
    expect(nowcastOf(metricDef("users"), h.panes)).toEqual({
      value: 155,
      spread: 4,
      error: { value: 0.3, unit: "%", spread: null, windows: 9 },
    });
  });

  it("shows the newest * window even when services have a newer one, and says the services are ahead", () => {
    const newer = pane({ service: "a", start: 2 * W, count: 5, kind: "early" });
    expect(headline([...SHARED, STAR, newer])).toMatchObject({ from: "engine", t: W, servicesAhead: true });
  });

  it("falls back to pooling the services when the newest * pane is stale (the merge stage stopped)", () => {
    const ahead = pane({ service: "a", start: W + (STALE_WINDOWS + 1) * W, count: 5 });
    const h = headline([...SHARED, STAR, ahead]);
    expect(h?.from).toBe("service");
    expect(h?.panes).toEqual([ahead]);
    const justInTime = pane({ service: "a", start: W + STALE_WINDOWS * W, count: 5 });
    expect(headline([...SHARED, STAR, justInTime])?.from).toBe("engine");
  });

  it("never reads the * pane for selected services, nor one of another policy or window size", () => {
    expect(headline([...SHARED, STAR], ["a", "b"])?.from).toBe("browser");
    expect(headline([...SHARED, STAR], ["a"])).toMatchObject({ from: "service", panes: [SHARED[0]] });
    const other = pane({ service: "*", start: W, policy: "billing", users: 150 });
    expect(headline([...SHARED, other])?.from).toBe("browser");
    const wide = pane({ service: "*", start: 0, windowMs: 60_000 });
    expect(headline([...SHARED, wide])?.from).toBe("browser");
  });

  it("is no headline without panes, and the * pane alone is enough", () => {
    expect(headline([])).toBeNull();
    expect(headline([STAR])).toMatchObject({ from: "engine", panes: [STAR], servicesAhead: false });
  });
});
