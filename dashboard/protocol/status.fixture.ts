import type {
  BiasStage,
  EngineStatusMessage,
  LatenessCorrelation,
  PaneBias,
  PolicyStatusWire,
  ServiceDial,
  StageBias,
} from "@tidemark/engine/protocol";

/** Test engine status (server and app unit tests): defaults for every field, overrides by name. Not built. */

/** A measured bias: `errorRatePp` with its spread, the other means fixed, over `windows`. */
export function testBias(errorRatePp: number | null, windows = 30, over: Partial<PaneBias> = {}): PaneBias {
  return {
    countPct: 2,
    errorRatePp,
    p99Pct: -3,
    usersPct: 1,
    windows,
    spread: { countPct: 0.5, errorRatePp: 0.3, p99Pct: 1, usersPct: 0.4 },
    scope: "service",
    provisional: false,
    ...over,
  };
}

/** A pooled bias of one pane kind (`StageBias`, `stage`: the kind's wire name). */
export function testKindBias(windowMs: number, kind: BiasStage, emitDelayMs: number, bias: PaneBias): StageBias {
  return { windowMs, stage: kind, bias: { ...bias, stage: kind }, emitDelayMs };
}

export function testLateness(over: Partial<LatenessCorrelation> = {}): LatenessCorrelation {
  return {
    onTimeEvents: 10_000,
    onTimeErrors: 100,
    lateEvents: 200,
    lateErrors: 2,
    z: 0,
    p: 1,
    ratio: 1,
    flagged: false,
    ...over,
  };
}

export function testDial(
  service: string,
  windowMs: number,
  onTime: PaneBias,
  final: PaneBias,
  lateness: LatenessCorrelation = testLateness(),
): ServiceDial {
  return { service, windowMs, onTime: { ...onTime, stage: "on-time" }, final: { ...final, stage: "final" }, lateness };
}

export function testPolicyStatus(name: string, over: Partial<PolicyStatusWire> = {}): PolicyStatusWire {
  return {
    name,
    label: `${name} label`,
    strategy: "arrival-lag 2s",
    graceMs: 0,
    mode: "accumulating",
    watermark: 0,
    lateAccepted: 0,
    dropped: 0,
    bias: { countPct: 4, errorRatePp: -1, p99Pct: null, usersPct: null, windows: 30 },
    emitDelayMs: 2000,
    ...over,
  };
}

export function testWorker(id: string, lag: number, policies: PolicyStatusWire[]): EngineStatusMessage {
  return {
    worker: id,
    wallTime: 0,
    logTime: 0,
    pipelineLagMs: lag,
    partitions: [],
    heldBackBy: null,
    policies,
    openWindows: 0,
    stateKeys: 0,
    stateBytes: 0,
    checkpointAgeMs: null,
    eventsTotal: 0,
  };
}
