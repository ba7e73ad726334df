import { poolBias, type BiasStage, type PaneBias, type ServiceDial, type StageBias } from "@tidemark/engine/protocol";
import type { FrontierPoint } from "../../protocol/ws-frames.js";

/** One point of the frontier: a policy at one pane kind, what it costs (emit delay) and what it gets wrong (bias). */
export interface DialPoint {
  policy: string;
  label: string;
  /** The pane kind (`BiasStage`: its wire name); null: an older engine reporting one bias per policy (its final's). */
  kind: BiasStage | null;
  /** Policy emit delay + pipeline lag, ms; null when not measured yet. */
  delayMs: number | null;
  bias: PaneBias;
}

/** What the frontier panel draws for one window size: points per policy, and the scope they are of. */
export interface FrontierView {
  /** Points per policy, in kind order (the line joins them). */
  policies: Array<{ policy: string; points: DialPoint[] }>;
  /** Services the points are of; empty: pooled over every service. */
  services: readonly string[];
  /** Policies with no dial for the selected services yet. */
  unmeasured: string[];
}

/** Kinds shown: early panes are emitted before their window ends, off the frontier's log axis. */
const SHOWN: readonly BiasStage[] = ["on-time", "late", "final"];

/**
 * The frontier for `windowMs` (docs/websocket-protocol.md, "Frontier panel"): one point per
 * (policy, pane kind) from the pooled per-kind biases (`stages` on the wire); with services selected,
 * their own on-time and final biases (pooled by window counts) at the pooled kinds' emit delays.
 */
export function frontierView(
  frontier: readonly FrontierPoint[],
  windowMs: number,
  services: readonly string[],
): FrontierView {
  const policies: FrontierView["policies"] = [];
  const unmeasured: string[] = [];
  for (const p of frontier) {
    const kinds = p.stages.filter((s) => s.windowMs === windowMs && SHOWN.includes(s.stage));
    const points = services.length === 0 ? pooled(p, kinds) : perService(p, kinds, windowMs, services);
    if (points.length === 0) unmeasured.push(p.policy);
    else policies.push({ policy: p.policy, points });
  }
  return { policies, services, unmeasured };
}

const delay = (p: FrontierPoint, emitDelayMs: number | null): number | null =>
  emitDelayMs === null ? null : emitDelayMs + (p.pipelineLagMs ?? 0);

function pooled(p: FrontierPoint, kinds: readonly StageBias[]): DialPoint[] {
  if (kinds.length === 0)
    return [{ policy: p.policy, label: p.label, kind: null, delayMs: delay(p, p.emitDelayMs), bias: p.bias }];
  return kinds.map((s) => ({
    policy: p.policy,
    label: p.label,
    kind: s.stage,
    delayMs: delay(p, s.emitDelayMs),
    bias: s.bias,
  }));
}

function perService(
  p: FrontierPoint,
  kinds: readonly StageBias[],
  windowMs: number,
  services: readonly string[],
): DialPoint[] {
  const dials = p.services.filter((d) => d.windowMs === windowMs && services.includes(d.service));
  if (dials.length === 0) return [];
  const pooled = (pick: (d: ServiceDial) => PaneBias): PaneBias => poolBias(dials.map(pick));
  const at = (kind: BiasStage) => kinds.find((s) => s.stage === kind);
  const onTime = at("on-time");
  const final = at("final");
  const out: DialPoint[] = [];
  // A final-only policy has no on-time panes (its dial's on-time equals its final).
  if (onTime)
    out.push({
      policy: p.policy,
      label: p.label,
      kind: "on-time",
      delayMs: delay(p, onTime.emitDelayMs),
      bias: pooled((d) => d.onTime),
    });
  out.push({
    policy: p.policy,
    label: p.label,
    kind: "final",
    delayMs: delay(p, final?.emitDelayMs ?? p.emitDelayMs),
    bias: pooled((d) => d.final),
  });
  return out;
}
