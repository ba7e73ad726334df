/**
 * The measured bias of a latency SLO's ratio (docs/slo.md, "Latency SLI"): the engine measures the
 * bias of a pane's error rate per kindAge and age against its reference, but publishes no reference
 * count of slow requests; so the server applies the same kindAge/age mechanism to the latency ratio
 * against the policy's own settling pane (its final pane, or its on-time pane when it has no final
 * one: the settled value the budget counts). Per kindAge and age bucket (the engine's, as the pane
 * states it), the last SAMPLES differences (pane ratio − settled ratio, pp) give a mean with a
 * 95 % Student-t half-width, as the engine's bias trackers do. Pure.
 */
import { studentT975 } from "@tidemark/engine/core";
import type { Pane } from "@tidemark/engine/protocol";

/** Windows per kindAge the mean is taken over: the engine's default bias window. */
export const SAMPLES = 30;

export interface KindBiasPp {
  /** Mean of pane ratio − final ratio, pp; null when no window is measured. */
  readonly meanPp: number | null;
  /** 95 % half-width of the mean, pp; null below two windows. */
  readonly spreadPp: number | null;
  readonly windows: number;
}

/**
 * The pane kind (and age, for early panes) a pane's bias is measured at: the engine's own age bucket of
 * the pane (`bias.age`), else the quarter of the window elapsed at emission, "1+" after its end.
 */
export function kindAgeOf(pane: Pane): string {
  if (pane.kind !== "early") return pane.kind;
  if (pane.bias.age !== undefined) return `early:${pane.bias.age}`;
  const f = (pane.emittedAt - pane.window.start) / (pane.window.end - pane.window.start);
  return `early:${f < 1 ? Math.max(0, Math.floor(4 * f)) / 4 : "1+"}`;
}

export class LatencyBias {
  private readonly samples = new Map<string, number[]>();
  /** Window end → kind (and age) → the ratio the newest pane of that kind showed. */
  private readonly shown = new Map<number, Map<string, number>>();

  /** The bias of a kind (and age) now. */
  at(kindAge: string): KindBiasPp {
    const xs = this.samples.get(kindAge) ?? [];
    const n = xs.length;
    if (n === 0) return { meanPp: null, spreadPp: null, windows: 0 };
    const mean = xs.reduce((a, b) => a + b, 0) / n;
    if (n < 2) return { meanPp: mean, spreadPp: null, windows: n };
    const ss = xs.reduce((a, x) => a + (x - mean) * (x - mean), 0);
    const t = studentT975(n - 1);
    return { meanPp: mean, spreadPp: (t * Math.sqrt(ss / (n - 1))) / Math.sqrt(n), windows: n };
  }

  /**
   * A pane of window `end` showed `ratio` (null: no requests); a settling pane (the policy's final,
   * or its on-time one when it has no final) turns the ratios shown before it into samples.
   */
  saw(end: number, kindAge: string, ratio: number | null, settles: boolean): void {
    if (settles) {
      const shown = this.shown.get(end);
      this.shown.delete(end);
      if (ratio === null || !shown) return;
      for (const [s, r] of shown) this.push(s, 100 * (r - ratio));
      return;
    }
    if (ratio === null || kindAge === "retract") return;
    let m = this.shown.get(end);
    if (!m) this.shown.set(end, (m = new Map()));
    m.set(kindAge, ratio);
  }

  /** Forgets the ratios shown for windows ending at or before `end` that no final pane settled. */
  forgetBefore(end: number): void {
    for (const e of this.shown.keys()) if (e <= end) this.shown.delete(e);
  }

  private push(kindAge: string, pp: number): void {
    let xs = this.samples.get(kindAge);
    if (!xs) this.samples.set(kindAge, (xs = []));
    xs.push(pp);
    if (xs.length > SAMPLES) xs.shift();
  }
}
