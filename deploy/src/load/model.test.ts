import { describe, expect, it } from "vitest";
import type { PlannedEvent } from "../demo/model.js";
import { LoadModel, type LoadModelOptions } from "./model.js";
import { QUIET_MIN_MS } from "./session-shape.js";

const T0 = 1_800_000_000_000;
const BASE: LoadModelOptions = { seed: 1, startMs: T0, rate: 1000, users: 20_000, services: 24, routes: 5 };

/** `seconds` of traffic, asked every `stepMs` like the sender's ticks. */
function run(opts: Partial<LoadModelOptions>, seconds: number, stepMs = 50): PlannedEvent[] {
  const model = new LoadModel({ ...BASE, ...opts });
  const out: PlannedEvent[] = [];
  for (let t = stepMs; t <= seconds * 1000; t += stepMs) for (const p of model.generate(T0 + t)) out.push(p);
  return out;
}

function groupBy(ps: readonly PlannedEvent[], key: (p: PlannedEvent) => string): Map<string, PlannedEvent[]> {
  const out = new Map<string, PlannedEvent[]>();
  for (const p of ps) {
    const list = out.get(key(p));
    if (list) list.push(p);
    else out.set(key(p), [p]);
  }
  return out;
}

const share = <T>(xs: readonly T[], pred: (x: T) => boolean): number => xs.filter(pred).length / xs.length;
const isErr = (p: PlannedEvent): boolean => p.event.status >= 500;

describe("LoadModel", () => {
  const thirty = run({}, 30);

  it("is deterministic for a seed, whatever the ticks, and differs across seeds", () => {
    const a = run({ seed: 7 }, 10, 50);
    expect(run({ seed: 7 }, 10, 50)).toEqual(a);
    expect(run({ seed: 7 }, 10, 1000)).toEqual(a);
    expect(run({ seed: 8 }, 10, 50)).not.toEqual(a);
  });

  it("makes --rate events per second from the first second on", () => {
    expect(thirty.length / 30).toBeGreaterThan(970);
    expect(thirty.length / 30).toBeLessThan(1030);
    const first = thirty.filter((p) => p.event.ts < T0 + 1000).length;
    expect(first).toBeGreaterThan(900);
    expect(first).toBeLessThan(1100);
    const fast = run({ rate: 10_000 }, 5);
    expect(fast.length / 5).toBeGreaterThan(9800);
    expect(fast.length / 5).toBeLessThan(10_200);
  });

  it("places each event in the time asked about, in time order, and never sends it before it happened", () => {
    let last = T0;
    const wrong = thirty.filter((p) => {
      const bad =
        p.event.ts < last || p.event.ts > T0 + 30_000 || !Number.isInteger(p.event.ts) || p.sendAt < p.event.ts;
      last = p.event.ts;
      return bad;
    });
    expect(wrong).toEqual([]);
  });

  it("sends 92 % within about a second and 8 % 1–30 s late", () => {
    const delays = thirty.map((p) => p.sendAt - p.event.ts);
    expect(share(delays, (d) => d < 1000)).toBeGreaterThan(0.9);
    expect(share(delays, (d) => d < 1000)).toBeLessThan(0.93);
    expect(share(delays, (d) => d >= 1000)).toBeCloseTo(
      share(thirty, (p) => p.late),
      9,
    );
    expect(share(delays, (d) => d > 2000)).toBeGreaterThan(0.07);
    expect(share(delays, (d) => d > 2000)).toBeLessThan(0.085);
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
  });

  it("fails ~1 % of requests outside bursts and ~20 % inside them, bursts lasting seconds", () => {
    const long = run({ rate: 2000 }, 120, 1000);
    // A burst shows as a second of a service with a high error share.
    const bySecond = groupBy(long, (p) => `${p.event.service}@${Math.floor((p.event.ts - T0) / 1000)}`);
    const seconds = [...bySecond.values()].filter((ps) => ps.length >= 40);
    const hot = seconds.filter((ps) => share(ps, isErr) > 0.1);
    const calm = seconds.filter((ps) => share(ps, isErr) <= 0.1);
    expect(hot.length).toBeGreaterThan(5);
    expect(share(calm.flat(), isErr)).toBeGreaterThan(0.007);
    expect(share(calm.flat(), isErr)).toBeLessThan(0.013);
    expect(share(hot.flat(), isErr)).toBeGreaterThan(0.15);
    expect(share(hot.flat(), isErr)).toBeLessThan(0.27);
    expect(share(long, isErr)).toBeLessThan(0.03);
  });

  it("with --corr X raises late events' error probability by X", () => {
    const corr = run({ corr: 0.4 }, 30);
    const late = corr.filter((p) => p.late);
    const onTime = corr.filter((p) => !p.late);
    expect(share(onTime, isErr)).toBeLessThan(0.03);
    expect(share(late, isErr) - share(onTime, isErr)).toBeGreaterThan(0.35);
    expect(share(late, isErr) - share(onTime, isErr)).toBeLessThan(0.45);
    expect(
      share(
        thirty.filter((p) => p.late),
        isErr,
      ),
    ).toBeLessThan(0.05);
  });

  it("sees most of the population in 30 s: 20,000 users, over 85 % of them distinct", () => {
    expect(new Set(thirty.map((p) => p.event.user)).size).toBeGreaterThan(17_000);
    const fast = run({ rate: 10_000 }, 30, 200);
    expect(new Set(fast.map((p) => p.event.user)).size).toBeGreaterThan(17_000);
    expect(thirty.every((p) => /^user-[0-9a-z]+$/.test(p.event.user))).toBe(true);
  });

  it("keeps a user's session on one service and its sessions apart by more than a minute", () => {
    const events = run({ rate: 2000, users: 300 }, 240, 1000);
    let sessions = 0;
    const shortQuiet: number[] = [];
    let switched = 0;
    for (const ps of groupBy(events, (p) => p.event.user).values()) {
      for (let i = 1; i < ps.length; i++) {
        const [a, b] = [ps[i - 1] as PlannedEvent, ps[i] as PlannedEvent];
        const gap = b.event.ts - a.event.ts;
        // Think times are ½…1½ of 135 ms here (300 users at 2000/s); a longer gap is a quiet spell.
        if (gap > 1000) {
          sessions++;
          if (gap < QUIET_MIN_MS - 1) shortQuiet.push(gap);
        } else if (a.event.service !== b.event.service) switched++;
      }
    }
    expect(sessions).toBeGreaterThan(50);
    expect(shortQuiet).toEqual([]);
    expect(switched).toBe(0);
  });

  it("skews services Zipf-like but gives every one traffic, with routes named like real ones", () => {
    const model = new LoadModel(BASE);
    const counts = new Map<string, number>();
    for (const p of thirty) counts.set(p.event.service, (counts.get(p.event.service) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(model.catalog.map((s) => s.service).sort());
    const first = counts.get(model.catalog[0]?.service ?? "") ?? 0;
    const last = counts.get(model.catalog.at(-1)?.service ?? "") ?? 0;
    expect(last).toBeGreaterThan(0);
    expect(first).toBeGreaterThan(5 * last);
    expect(model.catalog[0]?.service).toBe("api-gateway");
    expect(new LoadModel({ ...BASE, services: 30 }).catalog.at(-1)?.service).toBe("svc-30");
    expect(new Set(thirty.map((p) => p.event.route)).size).toBe(24 * 5);
    expect(thirty.every((p) => /^(GET|POST|PUT|DELETE|PATCH) \/api\/v1\//.test(p.event.route))).toBe(true);
  });

  it("draws latency lognormal around each route's median", () => {
    const model = new LoadModel(BASE);
    const route = model.catalog[0]?.routes[0];
    const ok = thirty
      .filter((p) => p.event.route === route?.route && p.event.status < 500)
      .map((p) => p.event.latency_ms)
      .sort((a, b) => a - b);
    expect(ok.length).toBeGreaterThan(1000);
    const median = ok[Math.floor(ok.length / 2)] as number;
    expect(median / (route?.medianMs ?? NaN)).toBeGreaterThan(0.9);
    expect(median / (route?.medianMs ?? NaN)).toBeLessThan(1.1);
  });

  it("makes 30,000 events/s too (its speed: npm run bench -w deploy, deploy/src/bench/load-model.ts)", () => {
    const model = new LoadModel({ ...BASE, rate: 30_000 });
    let n = 0;
    for (let t = 50; t <= 10_000; t += 50) n += model.generate(T0 + t).length;
    expect(n).toBeGreaterThan(290_000);
    expect(n).toBeLessThan(310_000);
  });
});
