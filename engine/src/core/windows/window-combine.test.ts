/**
 * A window's combine (window-combine.ts) against a brute-force merge of its slices, and its links
 * (docs/decisions/0050-state-layout.md): while a window has a combine, each key's combined value is
 * the value of a fresh merge of that key over the window's slices; a slice node links only to a
 * live combine's node of its own key; a dropped combine is linked from no slice node (so it is not
 * kept alive by them).
 */
import { describe, expect, it } from "vitest";
import type { PaneValue } from "../../protocol.js";
import { partitionOf } from "../../protocol.js";
import { createCore } from "../create-core.js";
import type { WindowConfigState } from "../core-state.js";
import { simulate } from "../simulation.js";
import type { EventTimeCore } from "../stream-core.js";
import type { CoreConfig } from "../types.js";
import { validateCoreConfig } from "../validate-config.js";
import type { Aggregate } from "./aggregate.js";
import { sketchAggregates } from "./sketch-aggregate.js";
import type { CombinedNode, KeyNode, Slice, Window } from "./window-state.js";

const T = 1_767_225_600_000;
const OUT = { pane: () => undefined, late: () => undefined };

const CONFIGS: Partial<CoreConfig>[] = [
  {
    windows: [
      { kind: "tumbling", sizeMs: 10_000 },
      { kind: "tumbling", sizeMs: 60_000 },
    ],
  },
  // Two windows per slice: a slice node's link is to one of them at a time.
  {
    windows: [
      { kind: "tumbling", sizeMs: 10_000 },
      { kind: "sliding", sizeMs: 30_000, slideMs: 10_000 },
    ],
  },
];

/** A fresh merge of the key over the window's slices (undefined when no slice has it). */
function bruteForce(w: Window, make: (route: boolean) => Aggregate, service: string, route?: string): PaneValue {
  const agg = make(route !== undefined);
  for (const s of w.slices) {
    const node = s.services.get(service);
    const key = route === undefined ? node : node?.routes?.get(route);
    if (key !== undefined) agg.merge(key.agg);
  }
  return agg.value();
}

/** The live combines, by object. */
function liveCombines(core: EventTimeCore): Set<unknown> {
  const live = new Set<unknown>();
  for (const c of core.state.windowConfigs) for (const w of c.windows.values()) if (w.combine) live.add(w.combine);
  return live;
}

function gridSlices(core: EventTimeCore): Slice[] {
  return core.state.windowConfigs.flatMap((c: WindowConfigState) => [...c.slices.values()]);
}

/** Checks every combine's values and every slice node's link; returns the number of combined keys checked. */
function check(core: EventTimeCore, make: (route: boolean) => Aggregate): number {
  let checked = 0;
  for (const c of core.state.windowConfigs)
    for (const w of c.windows.values()) {
      if (w.combine === null) continue;
      for (const [service, node] of w.combine.keys) {
        expect(node.agg.value()).toEqual(bruteForce(w, make, service));
        for (const [route, r] of node.routes ?? []) expect(r.agg.value()).toEqual(bruteForce(w, make, service, route));
        checked++;
      }
    }
  const live = liveCombines(core);
  const linked = (node: KeyNode, combined: CombinedNode | undefined): void => {
    if (node.folded === null) return;
    expect(live.has(node.folded.owner)).toBe(true);
    expect(node.folded).toBe(combined);
  };
  for (const s of gridSlices(core))
    for (const [service, node] of s.services) {
      const owner = node.folded?.owner;
      const combined = owner?.keys.get(service);
      linked(node, combined);
      for (const [route, r] of node.routes ?? []) linked(r, r.folded?.owner.keys.get(service)?.routes?.get(route));
    }
  return checked;
}

describe("a window's combine", () => {
  for (const partial of CONFIGS) {
    const windows = JSON.stringify(partial.windows);
    it(`equals a fresh merge of its slices, and its slices link only to live combines (${windows})`, () => {
      const config = validateCoreConfig({ partitions: 2, ...partial });
      const core = createCore(config) as EventTimeCore;
      const kind = sketchAggregates(config.relativeAccuracy, config.hllPrecision);
      const make = (route: boolean): Aggregate => kind.create(route);
      const events = simulate({ seed: 50, events: 12_000, spanMs: 90_000, startMs: T, services: 3, routes: 4 });
      let checked = 0;
      events.forEach((e, i) => {
        core.event(partitionOf(e.service, config.partitions), e, OUT);
        if (i % 1500 === 1499) checked += check(core, make);
      });
      // Log time on past every final and reference: combines are dropped (some rebuilt once), windows freed.
      const last = events.at(-1)?.ingest_ts ?? T;
      for (let t = last; t <= last + 400_000; t += 5_000) {
        for (let p = 0; p < config.partitions; p++) core.heartbeat(p, t, OUT);
        checked += check(core, make);
      }
      expect(checked).toBeGreaterThan(0);
      expect(liveCombines(core).size).toBe(0);
      for (const s of gridSlices(core)) for (const node of s.services.values()) expect(node.folded).toBeNull();
    });
  }
});
