import { describe, expect, it } from "vitest";
import type { LatenessCorrelation, PaneBias, ServiceDial } from "../../protocol.js";
import { boundServices } from "./status-services.js";

const bias = { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 1 } as PaneBias;

function dial(service: string, windowMs: number, events: number, flagged = false): ServiceDial {
  const lateness: LatenessCorrelation = {
    onTimeEvents: events,
    onTimeErrors: 0,
    lateEvents: 0,
    lateErrors: 0,
    z: null,
    p: null,
    ratio: null,
    flagged,
  };
  return { service, windowMs, onTime: bias, final: bias, lateness };
}

describe("boundServices", () => {
  it("keeps everything, in order, when under the bound", () => {
    const all = [dial("a", 10_000, 1), dial("b", 10_000, 5), dial("a", 60_000, 1)];
    expect(boundServices(all, 2)).toEqual({ services: all, omitted: 0 });
  });

  it("keeps the flagged, then the busiest, per window size, in the core's order, and counts the rest", () => {
    const all = [
      dial("a", 10_000, 1),
      dial("b", 10_000, 50),
      dial("c", 10_000, 2, true),
      dial("d", 10_000, 40),
      dial("e", 10_000, 40),
      dial("a", 60_000, 1),
    ];
    const { services, omitted } = boundServices(all, 3);
    expect(services.map((d) => `${d.service}@${d.windowMs}`)).toEqual(["b@10000", "c@10000", "d@10000", "a@60000"]);
    expect(omitted).toBe(2);
  });

  it("bounds a status of 2000 services per size far under NATS' 1 MiB max_payload", () => {
    const all = [10_000, 60_000].flatMap((w) => Array.from({ length: 2000 }, (_, i) => dial(`svc-${i}`, w, i)));
    const { services, omitted } = boundServices(all);
    expect(services.length).toBe(200);
    expect(omitted).toBe(3800);
    expect(services.filter((d) => d.windowMs === 10_000).map((d) => d.service)[0]).toBe("svc-1900");
    expect(JSON.stringify(services).length * 3).toBeLessThan(1024 * 1024);
  });
});
