/**
 * The offline accuracy/latency frontier (the seed's Block 7, through the real core): every policy
 * runs over one recording in one core (one shared aggregate per (window, service)); each
 * (window, service) pair's final value is what an idempotent sink holds at the end, compared with
 * the truth (every event of the pair). The key is the service; the window is tumbling.
 */
import { partitionOf, type Pane, type TelemetryEvent } from "../protocol.js";
import { createCore } from "./create-core.js";
import { ConfigError } from "./errors.js";
import type { CoreConfig, PolicyConfig } from "./types.js";
import { validateCoreConfig } from "./validate-config.js";

export interface FrontierPolicyResult {
  lag_ms: number;
  grace_ms: number;
  emit_delay_ms: number;
  dropped: number;
  wrong_windows: number;
  lost: number;
  max_error: number;
  accuracy_pct: number;
  error_rate_bias_pp: number | null;
}

export interface FrontierResult {
  events: number;
  windows: number;
  policies: FrontierPolicyResult[];
}

export interface FrontierOptions {
  windowMs: number;
  policies: readonly PolicyConfig[];
  /** Partitions the recording is split into, by service, as ingest does. */
  partitions: number;
  /** Called every `progressEvery` events with the number processed. */
  onProgress?: (done: number) => void;
  progressEvery?: number;
}

/** Lag of a policy whose W trails log time (or max event time) by a constant. */
export function policyLag(p: PolicyConfig): number {
  if (p.watermark.kind === "percentile")
    throw new ConfigError(
      `policy ${p.name}`,
      "a percentile watermark has no fixed lag: the frontier takes arrival-lag, bounded or perfect policies",
    );
  return p.watermark.lagMs;
}

/** `LAG+GRACE` as a final-only arrival-lag policy named p<index>. */
export function lagGracePolicy(index: number, lagMs: number, graceMs: number): PolicyConfig {
  return {
    name: `p${index}`,
    label: `arrival-lag ${lagMs} ms + grace ${graceMs} ms`,
    watermark: { kind: "arrival-lag", lagMs },
    graceMs,
    earlyEveryMs: null,
    lateEveryMs: null,
    mode: "final-only",
  };
}

/** Largest ingest_ts − ts in the recording: the `perfect` watermark's lag. */
export function maxDelay(events: readonly TelemetryEvent[]): number {
  let m = 0;
  for (const e of events) if (e.ingest_ts - e.ts > m) m = e.ingest_ts - e.ts;
  return m;
}

interface PairTotals {
  count: number;
  errors: number;
}

/** Final (count, errors) per policy per pair, as an idempotent sink applies the panes. */
class FinalTable {
  readonly byPolicy: Map<string, PairTotals>[];
  constructor(
    private readonly names: Map<string, number>,
    private readonly discarding: boolean[],
  ) {
    this.byPolicy = discarding.map(() => new Map());
  }
  apply(p: Pane): void {
    if (p.key.route !== undefined || p.kind === "retract") return;
    const i = this.names.get(p.policy) as number;
    const table = this.byPolicy[i] as Map<string, PairTotals>;
    const pair = `${p.window.start}|${p.key.service}`;
    const prev = table.get(pair);
    if (this.discarding[i] && prev) {
      prev.count += p.value.count;
      prev.errors += p.value.errors;
    } else table.set(pair, { count: p.value.count, errors: p.value.errors });
  }
}

function truthOf(events: readonly TelemetryEvent[], windowMs: number): Map<string, PairTotals> {
  const truth = new Map<string, PairTotals>();
  for (const e of events) {
    const pair = `${Math.floor(e.ts / windowMs) * windowMs}|${e.service}`;
    let t = truth.get(pair);
    if (!t) truth.set(pair, (t = { count: 0, errors: 0 }));
    t.count++;
    if (e.status >= 500) t.errors++;
  }
  return truth;
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

function score(truth: Map<string, PairTotals>, finals: Map<string, PairTotals>, events: number) {
  let wrong = 0;
  let lost = 0;
  let maxError = 0;
  let biasSum = 0;
  let biasN = 0;
  for (const [pair, t] of truth) {
    const f = finals.get(pair) ?? { count: 0, errors: 0 };
    if (f.count !== t.count) wrong++;
    lost += t.count - f.count;
    maxError = Math.max(maxError, t.count - f.count);
    if (f.count > 0) {
      biasSum += 100 * (f.errors / f.count - t.errors / t.count);
      biasN++;
    }
  }
  return {
    wrong_windows: wrong,
    lost,
    max_error: maxError,
    accuracy_pct: round(100 * (1 - (events === 0 ? 0 : lost / events)), 4),
    error_rate_bias_pp: biasN === 0 ? null : round(biasSum / biasN, 6),
  };
}

export function runFrontier(events: readonly TelemetryEvent[], o: FrontierOptions): FrontierResult {
  const config: CoreConfig = validateCoreConfig({
    partitions: o.partitions,
    windows: [{ kind: "tumbling", sizeMs: o.windowMs }],
    policies: o.policies,
    referenceHorizonMs: 0,
  });
  const lags = config.policies.map(policyLag);
  const core = createCore(config);
  const names = new Map(config.policies.map((p, i) => [p.name, i]));
  const finals = new FinalTable(
    names,
    config.policies.map((p) => p.mode === "discarding"),
  );
  const out = { pane: (p: Pane) => finals.apply(p), late: () => {} };
  const every = o.progressEvery ?? 100_000;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as TelemetryEvent;
    core.event(partitionOf(e.service, o.partitions), e, out);
    if (o.onProgress && (i + 1) % every === 0) o.onProgress(i + 1);
  }
  core.finish(out);
  const truth = truthOf(events, o.windowMs);
  const status = core.status();
  return {
    events: events.length,
    windows: truth.size,
    policies: config.policies.map((p, i) => {
      const lag = lags[i] as number;
      return {
        lag_ms: lag,
        grace_ms: p.graceMs,
        emit_delay_ms: lag + p.graceMs,
        dropped: status.policies[i]?.droppedWindowEvents ?? 0,
        ...score(truth, finals.byPolicy[i] as Map<string, PairTotals>, events.length),
      };
    }),
  };
}
