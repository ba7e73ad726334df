import type { EngineStatusMessage, Pane, PaneBias } from "@tidemark/engine/protocol";
import { pane } from "./fixtures.js";

/** A recognisable, deterministic stream of panes for the browser tests and the README screenshot. */
export const SERVICES = [
  { service: "checkout", rate: 120, errorPct: 2.9, p99: 420 },
  { service: "search", rate: 340, errorPct: 0.8, p99: 260 },
  { service: "auth", rate: 85, errorPct: 0.4, p99: 140 },
  { service: "cart", rate: 60, errorPct: 1.6, p99: 310 },
] as const;

export const POLICIES: Array<{
  name: string;
  label: string;
  strategy: string;
  graceMs: number;
  mode: string;
  emitDelayMs: number;
  shortfall: number;
  errShift: number;
  bias: PaneBias;
}> = [
  {
    name: "dashboard",
    label: "dashboard: 2 s, biased",
    strategy: "arrival-lag 2s",
    graceMs: 0,
    mode: "accumulating",
    emitDelayMs: 2000,
    shortfall: 0.064,
    errShift: -1.5,
    bias: { countPct: 6.4, errorRatePp: -1.5, p99Pct: -8.2, usersPct: 3.1, windows: 30 },
  },
  {
    name: "alerting",
    label: "alerting: 10 s, late panes",
    strategy: "arrival-lag 10s",
    graceMs: 30_000,
    mode: "retracting",
    emitDelayMs: 10_000,
    shortfall: 0.012,
    errShift: -0.3,
    bias: { countPct: 1.2, errorRatePp: -0.3, p99Pct: -1.9, usersPct: 0.5, windows: 30 },
  },
  {
    name: "billing",
    label: "billing: exact, 100 s",
    strategy: "arrival-lag 10s",
    graceMs: 90_000,
    mode: "final-only",
    emitDelayMs: 100_000,
    shortfall: 0,
    errShift: 0,
    bias: { countPct: 0, errorRatePp: 0, p99Pct: 0, usersPct: 0, windows: 30 },
  },
];

const PIPELINE_MS = 40;

/** Deterministic wobble in [-1, 1]. */
const wobble = (i: number, k: number): number => Math.sin(i * 0.37 + k * 1.7) * 0.6 + Math.sin(i * 0.11 + k) * 0.4;

/**
 * Panes of every service and policy for 10 s windows ending before `now` over `spanMs`: the
 * newest windows are early (dashboard), on-time (alerting, then late/final) or not yet emitted
 * (billing waits 100 s), as the engine would have them at `now`.
 */
export function scenarioPanes(now: number, spanMs: number, windowMs = 10_000): Pane[] {
  const out: Pane[] = [];
  const last = Math.floor(now / windowMs) * windowMs;
  for (let start = last - spanMs; start <= last; start += windowMs) {
    const i = start / windowMs;
    for (const [k, s] of SERVICES.entries()) {
      const refCount = Math.round(s.rate * (windowMs / 1000) * (1 + 0.15 * wobble(i, k)));
      const refErrPct = Math.max(0.1, s.errorPct * (1 + 0.35 * wobble(i + 3, k)));
      for (const pol of POLICIES) {
        const end = start + windowMs;
        const age = now - end;
        const kind = kindAt(pol.name, age);
        if (kind === null) continue;
        const count = Math.round(refCount * (1 - (kind === "early" ? pol.shortfall * 2.5 : pol.shortfall)));
        const errPct = Math.max(0, refErrPct + pol.errShift * (s.errorPct / 2.9));
        out.push(
          pane({
            policy: pol.name,
            service: s.service,
            windowMs,
            start,
            seq: kind === "early" ? 0 : kind === "on-time" ? 1 : kind === "late" ? 2 : 3,
            kind,
            count,
            errors: Math.round((count * errPct) / 100),
            ...latencies(s.p99 * (1 + 0.2 * wobble(i + 7, k)) * (1 + (pol.bias.p99Pct ?? 0) / 100)),
            users: Math.round(count * 0.31),
            emitDelayMs: pol.emitDelayMs,
            pipelineLagMs: PIPELINE_MS,
            bias: pol.bias,
          }),
        );
      }
    }
  }
  return out;
}

function latencies(p99: number): { p50: number; p95: number; p99: number } {
  return { p50: Math.round(p99 * 0.12), p95: Math.round(p99 * 0.55), p99: Math.round(p99) };
}

function kindAt(policy: string, ageMs: number): Pane["kind"] | null {
  if (policy === "dashboard") return ageMs < 2000 ? "early" : "on-time";
  if (policy === "alerting") return ageMs < 10_000 ? "early" : ageMs < 40_000 ? "late" : "final";
  return ageMs < 100_000 ? null : "final";
}

/** An engine status with 8 partitions: partition 3 silent for `stalledForMs` (holding the watermark), 6 idle. */
export function scenarioStatus(now: number, stalledForMs: number): EngineStatusMessage {
  const logTime = now - PIPELINE_MS;
  return {
    worker: "engine-0-7",
    wallTime: now,
    logTime,
    pipelineLagMs: PIPELINE_MS,
    partitions: Array.from({ length: 8 }, (_, p) => ({
      partition: p,
      logTime: p === 3 ? logTime - stalledForMs : p === 6 ? logTime - 95_000 : logTime - (p % 3) * 120,
      idle: p === 6,
      lastSeq: 41_000 + p * 977,
    })),
    heldBackBy: 3,
    policies: POLICIES.map((p) => ({
      name: p.name,
      label: p.label,
      strategy: p.strategy,
      graceMs: p.graceMs,
      mode: p.mode,
      watermark: logTime - stalledForMs - (p.name === "dashboard" ? 2000 : 10_000),
      lateAccepted: p.name === "dashboard" ? 0 : p.name === "alerting" ? 1843 : 5120,
      dropped: p.name === "dashboard" ? 5907 : p.name === "alerting" ? 612 : 0,
      bias: p.bias,
      emitDelayMs: p.emitDelayMs,
    })),
    openWindows: 248,
    stateKeys: 1890,
    stateBytes: 7_340_032,
    checkpointAgeMs: 3200,
    eventsTotal: 4_812_337,
  };
}
