import { describe, expect, it } from "vitest";
import type { TelemetryEvent } from "../../protocol.js";
import { capture } from "../__fixtures__/capture.js";
import { createCore } from "../create-core.js";
import { validateCoreConfig } from "../validate-config.js";

const T = 1_767_225_600_000; // a multiple of 60 s
const S = 1000;

interface Step {
  e: TelemetryEvent;
  /** Arrives after the fast policy has closed its window (dropped by it, kept by the reference). */
  late: boolean;
}

const step = (ts: number, ingest: number, service: string, user: string, late = false): Step => ({
  e: { ts, ingest_ts: ingest, service, route: "/", status: 200, latency_ms: 5, user },
  late,
});

// In ingest order. Window 0 = [T, T + 60 s), window 1 = [T + 60 s, T + 120 s).
const steps: Step[] = [
  step(T + 1 * S, T + 2 * S, "a", "u1"),
  step(T + 2 * S, T + 3 * S, "a", "u2"),
  step(T + 3 * S, T + 4 * S, "b", "u1"),
  // window 1 on time: log time T + 62..68 s moves the fast W (lag 2 s) past window 0's end.
  step(T + 61 * S, T + 62 * S, "a", "u1"),
  step(T + 62 * S, T + 63 * S, "a", "u2"),
  step(T + 63 * S, T + 64 * S, "a", "u3"),
  step(T + 67 * S, T + 68 * S, "a", "u4"),
  // late for window 0: new users u3 (a), u4 and u5 (b), and the known u1 (a).
  step(T + 50 * S, T + 70 * S, "a", "u3", true),
  step(T + 51 * S, T + 71 * S, "a", "u1", true),
  step(T + 52 * S, T + 72 * S, "b", "u4", true),
  step(T + 53 * S, T + 73 * S, "b", "u5", true),
  // late for window 1 once log time is T + 130 s: a new user u6 (a).
  step(T + 100 * S, T + 130 * S, "a", "u6", true),
];

/** Distinct users per service of a window, over the given steps. */
function usersOf(start: number, of: readonly Step[]): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const { e } of of) {
    if (e.ts < start || e.ts >= start + 60 * S) continue;
    let set = m.get(e.service);
    if (set === undefined) m.set(e.service, (set = new Set()));
    set.add(e.user);
  }
  return m;
}

const total = (m: Map<string, Set<string>>): number => [...m.values()].reduce((s, set) => s + set.size, 0);

describe("measured bias of distinct users", () => {
  it("late events with new users: the fast policy's usersPct is the users shortfall, a keep-everything policy's is 0", () => {
    const core = createCore(
      validateCoreConfig({
        partitions: 1,
        windows: ["60s"],
        policies: [
          { name: "fast", watermark: { kind: "arrival-lag", lag: "2s" }, mode: "final-only" },
          { name: "all", watermark: { kind: "arrival-lag", lag: "90s" }, mode: "final-only" },
        ],
        referenceHorizon: "2m",
      }),
    );
    const out = capture();
    for (const [i, s] of steps.entries()) {
      if (i === steps.length - 1) core.heartbeat(0, T + 125 * S, out); // the fast policy closes window 1 first
      core.event(0, s.e, out);
    }
    core.heartbeat(0, T + 300 * S, out); // past window 1's end + reference horizon
    // the test's notion of "late" is the core's: exactly those events were dropped by fast.
    expect(out.dropped.filter((d) => d.policy === "fast").map((d) => d.event)).toEqual(
      steps.filter((s) => s.late).map((s) => s.e),
    );
    expect(out.dropped.filter((d) => d.policy === "all")).toEqual([]);

    // expected, from the events: per window, 100 · (Σ reference users − Σ fast users) / Σ reference users, then the mean.
    const shortfall = [0, 60 * S].map((off) => {
      const ref = total(usersOf(T + off, steps));
      return (
        (100 *
          (ref -
            total(
              usersOf(
                T + off,
                steps.filter((s) => !s.late),
              ),
            ))) /
        ref
      );
    });
    expect(shortfall).toEqual([50, 20]); // window 0: 6 users vs 3; window 1: 5 vs 4
    const [fast, all] = core.status().policies;
    expect(fast?.bias.windows).toBe(2);
    expect(fast?.bias.usersPct).toBeCloseTo((shortfall[0]! + shortfall[1]!) / 2, 9);
    expect(all?.bias).toEqual({
      countPct: 0,
      errorRatePp: 0,
      p99Pct: 0,
      usersPct: 0,
      windows: 2,
      // two equal samples: an interval of width 0
      spread: { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0 },
      stage: "final",
      scope: "policy",
      provisional: false,
    });

    // with so few users the sparse HyperLogLog is exact: the panes' users equal the true distinct counts.
    for (const p of out.panes.filter((q) => q.key.route === undefined && q.kind === "final")) {
      const kept = p.policy === "fast" ? steps.filter((s) => !s.late) : steps;
      expect([p.policy, p.key.service, p.window.start, p.value.users]).toEqual([
        p.policy,
        p.key.service,
        p.window.start,
        usersOf(p.window.start, kept).get(p.key.service)?.size,
      ]);
    }
  });
});
