/**
 * The merge stage's placement (docs/decisions/0029-two-stage-dataflow.md): a merged tick's
 * aggregate of one slice and group key goes into the slice of each grid of that slice length as a
 * record's values would (stream-core.ts, `place`), and is classified as all of its records at once
 * where it is behind some policy's W: they share their slice, so every window and policy judges
 * them alike, at the tick's start. Counts add the aggregate's records; dropped ones are counted,
 * with no late record (the merge stage has no records to send, only their aggregate).
 */
import type { Aggregate, AggregateKind } from "../windows/aggregate.js";
import type { WindowConfigState } from "../core-state.js";
import type { PolicyState } from "../panes/policy-state.js";
import type { TriggerContext } from "../panes/trigger-context.js";
import { acceptLate } from "../panes/triggers.js";
import { firstWindowStart, lastWindowStart } from "../windows/window-assigner.js";
import { addFoldedAggregate } from "../windows/window-combine.js";
import { trackNodeOf, trackNode, type KeyNode, type Slice } from "../windows/window-state.js";

/** One group key's aggregate of a merged tick, for one slice. */
export interface PartialAggregate {
  sliceMs: number;
  sliceStart: number;
  service: string;
  agg: Aggregate;
}

/** What placement needs of the core (a narrow view: it never sees the operator). */
export interface PlaceContext {
  readonly configs: readonly WindowConfigState[];
  readonly policies: readonly PolicyState[];
  readonly kind: AggregateKind;
  readonly triggers: TriggerContext;
  /** Largest W of any policy: a slice whose windows all end after it is on time for all. */
  readonly maxWatermark: number;
  readonly eventsTotal: number;
  /** The key registry's name for a group key (its cap applied). */
  serviceName(service: string): string;
  /** The grid's slice, opened (with its windows) if new; undefined when every window of it is gone. */
  openSlice(grid: WindowConfigState, sliceStart: number): Slice | undefined;
}

/** Which policies counted this aggregate's records dropped (1) and late (2) already: once each per policy. */
type Counted = Uint8Array;

/** Places one aggregate. */
export function placePartial(ctx: PlaceContext, d: PartialAggregate): void {
  let counted: Counted | undefined;
  const service = ctx.serviceName(d.service);
  const configs = ctx.configs;
  for (let i = 0; i < configs.length; i++) {
    const grid = configs[i] as WindowConfigState;
    if (grid.grid !== i || grid.spec.sliceMs !== d.sliceMs) continue;
    let slice = grid.slices.get(d.sliceStart);
    const slow = slice === undefined || slice.minEnd <= ctx.maxWatermark;
    slice ??= ctx.openSlice(grid, d.sliceStart);
    const node = slice === undefined ? undefined : add(ctx, slice, service, d.agg);
    if (!slow) continue;
    counted ??= new Uint8Array(ctx.policies.length);
    for (const c of configs) if (c.grid === i) classify(ctx, c, d, service, node, counted);
  }
}

function add(ctx: PlaceContext, slice: Slice, service: string, agg: Aggregate): KeyNode {
  slice.adds += agg.count;
  let node = slice.services.get(service);
  if (node === undefined)
    slice.services.set(
      service,
      (node = { agg: ctx.kind.create(), routes: new Map(), tracks: null, seen: ctx.eventsTotal, folded: null }),
    );
  node.agg.merge(agg);
  if (slice.foldedInto !== null) addFoldedAggregate(slice, service, node, agg);
  return node;
}

/** Behind some policy's W for a window of the slice: counted late or dropped, as every record of it would be. */
function classify(
  ctx: PlaceContext,
  c: WindowConfigState,
  d: PartialAggregate,
  service: string,
  node: KeyNode | undefined,
  counted: Counted,
): void {
  const spec = c.spec;
  const n = d.agg.count;
  const latest = lastWindowStart(spec, d.sliceStart);
  for (let start = firstWindowStart(spec, d.sliceStart); start <= latest; start += spec.slideMs) {
    const end = start + spec.sizeMs;
    const w = c.windows.get(start);
    for (const p of ctx.policies) {
      const watermark = ctx.triggers.watermarkOf(p);
      if (end > watermark) continue;
      const was = counted[p.index] as number;
      if (end + p.cfg.graceMs <= watermark || w === undefined) {
        p.droppedWindowEvents += n;
        if (!(was & 1)) p.droppedEvents += n;
        counted[p.index] = was | 1;
      } else {
        p.lateAcceptedWindowEvents += n;
        if (!(was & 2)) p.lateAcceptedEvents += n;
        counted[p.index] = was | 2;
        const track = node ? trackNodeOf(w, service, undefined, node) : trackNode(w, service, undefined);
        acceptLate(ctx.triggers, p, w, track, null, n);
      }
      if (w !== undefined && w.lateness !== null && w.ref === null)
        countLate(w.lateness, ctx.policies.length, p, service, d.agg);
    }
  }
}

/** The aggregate's records missed the policy's on-time pane: counted for its key (docs/semantics.md, "Correlated lateness"). */
function countLate(
  lateness: Map<string, Float64Array>,
  policies: number,
  p: PolicyState,
  service: string,
  agg: Aggregate,
): void {
  let v = lateness.get(service);
  if (v === undefined) lateness.set(service, (v = new Float64Array(2 * policies)));
  v[2 * p.index] = (v[2 * p.index] as number) + agg.count;
  v[2 * p.index + 1] = (v[2 * p.index + 1] as number) + agg.errors;
}
