import type { LatenessCorrelation, PaneBias, StageBias } from "@tidemark/engine/protocol";
import type { FrontierPoint } from "../protocol/ws-frames.js";

/** One policy as `GET /api/policies` answers it (docs/websocket-protocol.md, "REST"). */
export interface PolicyDialView {
  name: string;
  label: string;
  strategy: string;
  graceMs: number | null;
  /** The pooled final bias for `windowMs` (the policy's reported bias when no kind's is known). */
  bias: PaneBias;
  emitDelayMs: number | null;
  pipelineLagMs: number | null;
  source: FrontierPoint["source"];
  /** The window size this view is of; null when the engine reports no per-kind bias (older engines). */
  windowMs: number | null;
  services: Array<{ service: string; onTime: PaneBias; final: PaneBias; lateness: LatenessCorrelation }>;
  /** Pooled bias per pane kind; `stages` is its wire name on `/api/policies` (docs/architecture.md, glossary). */
  stages: StageBias[];
}

/** Window sizes the engines report per-kind or service dials for, smallest first. */
export function reportedSizes(frontier: readonly FrontierPoint[]): number[] {
  const sizes = new Set<number>();
  for (const p of frontier) {
    for (const s of p.stages) sizes.add(s.windowMs);
    for (const d of p.services) sizes.add(d.windowMs);
  }
  return [...sizes].sort((a, b) => a - b);
}

/**
 * The frontier for one window size: `windowMs` null picks the smallest reported. Returns a
 * sentence saying what to do when the size is not one the engines report.
 */
export function policiesFor(
  frontier: readonly FrontierPoint[],
  windowMs: number | null,
): { policies: PolicyDialView[] } | { invalid: string } {
  const sizes = reportedSizes(frontier);
  if (windowMs !== null && sizes.length > 0 && !sizes.includes(windowMs))
    return { invalid: `must be a window size the engine reports: ${sizes.map(asParam).join(", ")}` };
  const size = windowMs ?? sizes[0] ?? null;
  return {
    policies: frontier.map((p) => {
      const kinds = p.stages.filter((s) => s.windowMs === size);
      const final = kinds.find((s) => s.stage === "final");
      return {
        name: p.policy,
        label: p.label,
        strategy: p.strategy,
        graceMs: p.graceMs,
        bias: final ? final.bias : p.bias,
        emitDelayMs: p.emitDelayMs,
        pipelineLagMs: p.pipelineLagMs,
        source: p.source,
        windowMs: size,
        services: p.services
          .filter((d) => d.windowMs === size)
          .map(({ service, onTime, final: fin, lateness }) => ({ service, onTime, final: fin, lateness })),
        stages: kinds,
      };
    }),
  };
}

/** A window size as the query parameter writes it: 10000 → "10s", 500 → "500ms". */
function asParam(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
