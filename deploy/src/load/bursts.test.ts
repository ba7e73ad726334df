import { describe, expect, it } from "vitest";
import { ErrorBursts, LOAD_BURSTS } from "./bursts.js";

const T0 = 1_800_000_000_000;

/** The bursts of `service` over `ms`, read every `stepMs`: [start, end, rate] runs. */
function bursts(b: ErrorBursts, service: number, ms: number, stepMs: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  let open: [number, number, number] | undefined;
  for (let t = T0; t <= T0 + ms; t += stepMs) {
    const rate = b.errorRateAt(service, t);
    if (rate > 0 && open?.[2] === rate) open[1] = t;
    else if (rate > 0) out.push((open = [t, t, rate]));
    else open = undefined;
  }
  return out;
}

describe("ErrorBursts", () => {
  it("gives each service bursts of ~20 % errors lasting 2–6 s, about one per 1.5 minutes", () => {
    const b = new ErrorBursts(24, 1, T0);
    const all = Array.from({ length: 24 }, (_, s) => bursts(b, s, 3_600_000, 100)).flat();
    // 24 services × 1 h / (90 s gap + 4 s burst) ≈ 920.
    expect(all.length).toBeGreaterThan(800);
    expect(all.length).toBeLessThan(1050);
    // A burst still running at the hour's end is cut short: not judged.
    for (const [start, end, rate] of all.filter(([, end]) => end < T0 + 3_600_000 - LOAD_BURSTS.maxMs)) {
      expect(end - start).toBeLessThanOrEqual(LOAD_BURSTS.maxMs);
      expect(end - start).toBeGreaterThanOrEqual(LOAD_BURSTS.minMs - 200);
      expect(rate).toBeGreaterThanOrEqual(0.15);
      expect(rate).toBeLessThanOrEqual(0.25);
    }
  });

  it("depends on the seed alone, not on how often or in which order services are asked", () => {
    const a = new ErrorBursts(3, 5, T0);
    const b = new ErrorBursts(3, 5, T0);
    const coarse = bursts(a, 2, 600_000, 100);
    bursts(b, 0, 600_000, 7);
    expect(bursts(b, 2, 600_000, 100)).toEqual(coarse);
    expect(bursts(new ErrorBursts(3, 6, T0), 2, 600_000, 100)).not.toEqual(coarse);
  });
});
