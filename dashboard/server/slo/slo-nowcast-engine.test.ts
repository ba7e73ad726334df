/**
 * SLO tiers judged on the nowcast on the real engine core's early panes (docs/slo.md, "Burn
 * rates"): the stream of `../rules/late-successes.fixture.ts` (errors on time, successes 6 s
 * late; `slow` settles at 15 %, `real` at 25 % in a few incident windows), one SLO per service on
 * the default `alerting` policy, objective 99 % and a tier of 20 s / 10 s at × 19 (a 19 % error
 * ratio). Oracle: each window's settled error ratio brute-forced from the raw events.
 */
import type { Pane } from "@tidemark/engine/protocol";
import { describe, expect, it } from "vitest";
import { INCIDENTS, runCore, settled, stream, T0, W, WARM } from "../rules/late-successes.fixture.js";
import { SloBook } from "./slo-book.js";
import { parseSlos } from "./slo-config.js";

const FACTOR = 19;
const OBJECTIVE = 0.99;
const slos = parseSlos(
  ["slow", "real"].map((service) => ({
    name: `${service}-availability`,
    service,
    objective: OBJECTIVE,
    policy: "alerting",
    tiers: [{ severity: "page", long: "20s", short: "10s", factor: FACTOR }],
  })),
  { policies: ["dashboard", "alerting", "billing"], windowsMs: [W, 60_000] },
  "test",
);

describe("SLO tiers on the engine core's early panes, judged on the nowcast", () => {
  const events = stream();
  const truth = settled(events);
  /** What the alerts did, at the log time of the batch of panes that moved them. */
  const seen: Array<{ event: string; slo: string; at: number }> = [];
  let at = -Infinity;
  const note = (event: string, slo: string | undefined) => seen.push({ event, slo: slo ?? "", at });
  const book = new SloBook(slos, "http://dash", {
    fired: (n) => note("fired", n.labels["slo"]),
    updated: () => undefined,
    ended: (n, how) => note(how, n.labels["slo"]),
  });
  // Panes emitted together (a retraction and its replacement) are judged together, as the
  // dashboard's feed delivers them.
  runCore(events, (p: Pane) => {
    if (p.emittedAt !== at) book.flush();
    at = p.emittedAt;
    book.offer(p);
  });
  book.flush();
  /** The log time the engine emitted the on-time pane of service's window starting at s. */
  const onTimeAt = new Map<string, number>();
  runCore(events, (p: Pane) => {
    if (p.kind === "on-time" && p.policy === "alerting" && p.key.route === undefined)
      onTimeAt.set(`${p.key.service} ${p.window.start}`, p.emittedAt);
  });
  /** The brute force's burn rate of the 20 s window ending at the end of window start s. */
  const settledBurn = (service: string, s: number) =>
    ((truth.get(`${service} ${s}`) as number) + (truth.get(`${service} ${s - W}`) as number)) / 2 / (1 - OBJECTIVE);
  const warm = (x: { at: number }) => x.at >= WARM;

  it("before the bias is measured slow's early panes raise a false alarm, retracted by the settled panes", () => {
    const before = seen.filter((s) => s.slo === "slow-availability" && !warm(s));
    expect(before[0]?.event).toBe("fired");
    // Fired before the first window's on-time pane: on early panes.
    expect(before[0]?.at).toBeLessThan(onTimeAt.get(`slow ${T0}`) as number);
    expect(before.at(-1)?.event).toBe("retracted");
  });

  it("after warm-up slow never pages; real pages on an early pane of each incident window, as the events say", () => {
    const after = seen.filter(warm);
    expect(after.filter((s) => s.slo === "slow-availability")).toEqual([]);
    const fired = after.filter((s) => s.slo === "real-availability" && s.event === "fired");
    expect(fired.length).toBe(INCIDENTS.size);
    for (const [i, start] of [...INCIDENTS].entries()) {
      // Fired on the early panes after the incident window's end, before its on-time pane.
      expect(fired[i]?.at).toBeGreaterThanOrEqual(start + W);
      expect(fired[i]?.at).toBeLessThan(onTimeAt.get(`real ${start}`) as number);
      // The events agree: the incident window and the 20 s ending with it are over the factor.
      expect(settledBurn("real", start)).toBeGreaterThan(FACTOR);
      expect((truth.get(`real ${start}`) as number) / (1 - OBJECTIVE)).toBeGreaterThan(FACTOR);
    }
    // The oracle: slow never crosses in the events.
    for (const [k, r] of truth) if (k.startsWith("slow ")) expect(r / (1 - OBJECTIVE)).toBeLessThan(FACTOR);
    expect(after.filter((s) => s.event === "retracted")).toEqual([]);
  });
});
