import { poolBias, type BiasStage, type PaneBias, type ServiceDial, type StageBias } from "@tidemark/engine/protocol";
import type { FrontierPoint } from "../../protocol/ws-frames.js";

/** One point of the frontier: a policy at one stage, what it costs (emit delay) and what it gets wrong (bias). */
export interface DialPoint {
  policy: string;
  label: string;
  /** Null: an older engine reporting one bias per policy (its final's), no stages. */
  stage: BiasStage | null;
  /** Policy emit delay + pipeline lag, ms; null when not measured yet. */
  delayMs: number | null;
  bias: PaneBias;
}

/** What the frontier panel draws for one window size: points per policy, and the scope they are of. */
export interface FrontierView {
  /** Points per policy, in stage order (the line joins them). */
  policies: Array<{ policy: string; points: DialPoint[] }>;
  /** Services the points are of; empty: pooled over every service. */
  services: readonly string[];
  /** Policies with no dial for the selected services yet. */
  unmeasured: string[];
}

/** Stages shown: early panes are emitted before their window ends, off the frontier's log axis. */
const SHOWN: readonly BiasStage[] = ["on-time", "late", "final"];

/**
 * The frontier for `windowMs` (docs/websocket-protocol.md, "Frontier panel"): one point per
 * (policy, stage) from the pooled stage biases; with services selected, their own on-time and
 * final biases (combined by window counts) at the pooled stages' emit delays.
 */
export function frontierView(
  frontier: readonly FrontierPoint[],
  windowMs: number,
  services: readonly string[],
): FrontierView {
  const policies: FrontierView["policies"] = [];
  const unmeasured: string[] = [];
  for (const p of frontier) {
    const stages = p.stages.filter((s) => s.windowMs === windowMs && SHOWN.includes(s.stage));
    const points = services.length === 0 ? pooled(p, stages) : perService(p, stages, windowMs, services);
    if (points.length === 0) unmeasured.push(p.policy);
    else policies.push({ policy: p.policy, points });
  }
  return { policies, services, unmeasured };
}

const delay = (p: FrontierPoint, emitDelayMs: number | null): number | null =>
  emitDelayMs === null ? null : emitDelayMs + (p.pipelineLagMs ?? 0);

function pooled(p: FrontierPoint, stages: readonly StageBias[]): DialPoint[] {
  if (stages.length === 0)
    return [{ policy: p.policy, label: p.label, stage: null, delayMs: delay(p, p.emitDelayMs), bias: p.bias }];
  return stages.map((s) => ({
    policy: p.policy,
    label: p.label,
    stage: s.stage,
    delayMs: delay(p, s.emitDelayMs),
    bias: s.bias,
  }));
}

function perService(
  p: FrontierPoint,
  stages: readonly StageBias[],
  windowMs: number,
  services: readonly string[],
): DialPoint[] {
  const dials = p.services.filter((d) => d.windowMs === windowMs && services.includes(d.service));
  if (dials.length === 0) return [];
  const pooled = (pick: (d: ServiceDial) => PaneBias): PaneBias => poolBias(dials.map(pick));
  const at = (stage: BiasStage) => stages.find((s) => s.stage === stage);
  const onTime = at("on-time");
  const final = at("final");
  const out: DialPoint[] = [];
  // A final-only policy has no on-time stage (its dial's on-time equals its final).
  if (onTime)
    out.push({
      policy: p.policy,
      label: p.label,
      stage: "on-time",
      delayMs: delay(p, onTime.emitDelayMs),
      bias: pooled((d) => d.onTime),
    });
  out.push({
    policy: p.policy,
    label: p.label,
    stage: "final",
    delayMs: delay(p, final?.emitDelayMs ?? p.emitDelayMs),
    bias: pooled((d) => d.final),
  });
  return out;
}
