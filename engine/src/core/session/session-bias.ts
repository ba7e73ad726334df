/**
 * Measured bias of session cells (docs/semantics.md, "Session windows"): the hidden reference
 * policy keeps every event to the reference horizon and counts its sessions into cells like any
 * policy. When its W passes a window's end it has all of that window's sessions; each policy whose
 * final is out is then measured there, per service and pooled, at every pane kind it showed (early
 * panes by age, on-time, late, final): session-count shortfall in %, error-session share in pp,
 * duration p99 error in % (`usersPct` is null: cells measure no distinct users). One dial per
 * (policy, window size), as window panes have; session panes carry their own service's and kind's
 * figure from it.
 */
import type { BiasPoint } from "../dial/bias.js";
import type { ByteReader, ByteWriter } from "../snapshot/byte-codec.js";
import { readPolicyDial, writePolicyDial } from "../dial/dial-snapshot.js";
import { newPolicyDial, sweepDial, type PolicyDial } from "../dial/policy-dial.js";
import { emitsOnTime, type PolicyState } from "../panes/policy-state.js";
import { measureShown } from "../dial/window-measure.js";
import type { CellWindow } from "./cell-window.js";

export class SessionDials {
  /** Per configured policy, per window size. */
  readonly dials: PolicyDial[][];

  constructor(sizes: readonly number[], policies: number, biasWindows: number, serviceCap: number) {
    this.dials = Array.from({ length: policies }, () =>
      sizes.map((sizeMs) => {
        const dial = newPolicyDial(sizeMs, biasWindows, serviceCap);
        dial.provisional = null;
        return dial;
      }),
    );
  }

  dialOf(p: PolicyState, size: number): PolicyDial {
    return (this.dials[p.index] as PolicyDial[])[size] as PolicyDial;
  }

  /** The reference's values of `w` per service (its cells' count, error sessions and duration p99). */
  static referenceOf(w: CellWindow, reference: number): Map<string, BiasPoint> {
    const ref = new Map<string, BiasPoint>();
    for (const [service, cells] of w.services) {
      const r = cells[reference];
      if (r === undefined) continue;
      ref.set(service, {
        count: r.count,
        errors: r.errors,
        p99: r.count > 0 ? r.durations.quantile(0.99) : 0,
        users: 0,
      });
    }
    return ref;
  }

  /** Measures what policy p showed of `w` (its final out, `w.ref` set) against the reference. */
  measure(w: CellWindow, p: PolicyState, logTime: number): void {
    const ref = w.ref;
    if (ref === null || ref.size === 0) return;
    const shown = (service: string) => w.services.get(service)?.[p.index]?.points;
    measureShown(this.dialOf(p, w.size), emitsOnTime(p), ref, shown, logTime);
  }

  /** Forgets services last measured before `cutoff` (log time). */
  sweep(cutoff: number): void {
    for (const perSize of this.dials) for (const dial of perSize) sweepDial(dial, cutoff);
  }

  encode(w: ByteWriter): void {
    for (const perSize of this.dials) for (const dial of perSize) writePolicyDial(w, dial);
  }

  decode(r: ByteReader): void {
    for (const perSize of this.dials) for (const dial of perSize) readPolicyDial(r, dial);
  }
}
