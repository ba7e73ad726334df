/**
 * The pure event-time engine (docs/semantics.md): one shared aggregate per (slice, key); each
 * policy is a schedule of snapshots of it, fired from timer queues ordered by due log time (or by W
 * for event-time strategies). Per-event work is O(1) amortized and independent of the policy count
 * for events on time for every policy. All of its state is one CoreState (core-state.ts); an
 * InputDriver takes the inputs and keeps time; triggers see the core only through a TriggerContext.
 */
import { retirePartitions } from "./watermarks/clock-state.js";
import { RequestInput } from "@tidemark/sketches";
import { isError, type LateRecord, type TelemetryEvent } from "../protocol.js";
import type { AggregateKind } from "./windows/aggregate.js";
import { newCoreState, type CoreState, type WindowConfigState } from "./core-state.js";
import { coreStatus } from "./core-status.js";
import { InputDriver } from "./watermarks/input-driver.js";
import { sweepDial, type PolicyDial } from "./dial/policy-dial.js";
import { emitsOnTime, type PolicyState } from "./panes/policy-state.js";
import { measureProvisional } from "./dial/provisional.js";
import { encodeCoreSnapshot, encodeCoreSnapshotSteps } from "./snapshot/snapshot.js";
import type { TriggerContext } from "./panes/trigger-context.js";
import { acceptLate, earlyTick, finalPane, lateFlush, onTime, referenceClose } from "./panes/triggers.js";
import type { CoreConfig, CoreOutput, CoreStatus, PartialTick, SnapshotSteps, StreamCore } from "./types.js";
import { firstWindowStart, lastWindowStart } from "./windows/window-assigner.js";
import { freeWindow, openSlice, scheduleWindow } from "./windows/window-lifecycle.js";
import { placePartial, type PartialAggregate, type PlaceContext } from "./partials/place-partial.js";
import { addFolded } from "./windows/window-combine.js";
import {
  KIND_FINAL,
  KIND_ON_TIME,
  trackNode,
  trackNodeOf,
  type KeyNode,
  type Slice,
  type Window,
} from "./windows/window-state.js";
import { coreTimerBefore, WindowTimerKind, type WindowTimer } from "./windows/window-timer.js";

const NO_OUTPUT: CoreOutput = { pane: () => undefined, late: () => undefined };

/** The core's side of the trigger context; its output is set at each hook. (A class: one shape for all.) */
class CoreTriggers implements TriggerContext {
  out: CoreOutput = NO_OUTPUT;

  constructor(
    private readonly driver: InputDriver<WindowTimer>,
    private readonly configs: readonly WindowConfigState[],
  ) {}

  get logTime(): number {
    return this.driver.clock.logTime;
  }

  watermarkOf(p: PolicyState): number {
    return this.driver.watermarkOf(p);
  }

  schedule(t: WindowTimer): void {
    this.driver.atLogTime(t);
  }

  free(w: Window): void {
    const c = this.configs[w.configIndex] as WindowConfigState;
    freeWindow(c, this.configs[c.grid] as WindowConfigState, w);
  }

  dialOf(p: PolicyState, configIndex: number): PolicyDial {
    return (this.configs[configIndex] as WindowConfigState).dials[p.index] as PolicyDial;
  }
}

export class EventTimeCore implements StreamCore {
  private readonly driver: InputDriver<WindowTimer>;
  /** Largest W of any policy: a slice whose windows all end after it is on time for all. */
  private maxWatermark = -Infinity;
  private readonly minArrivalLag: number;
  private readonly eventTimePolicies: PolicyState[];
  /** The reference's index in a window's kind bits (= the number of policies). */
  private readonly referenceIndex: number;
  private readonly triggers: CoreTriggers;
  /** The record being placed: its service and route as the key registry names them (asked at most once). */
  private readonly names: { service: string | undefined; route: string | undefined } = {
    service: undefined,
    route: undefined,
  };
  /** The names the last serviceNode / routeNode found their nodes under (the slice's keys). */
  private nodeService = "";
  private nodeRoute = "";
  /** Per policy: the record (by its number) last counted dropped / late, so an event counts once. */
  private readonly dropStamps: Float64Array;
  private readonly lateStamps: Float64Array;
  /** The record being placed, per slice grid: on the slow path (1), and its key nodes there. */
  private readonly slowAt: Uint8Array;
  private readonly slowNodes: (KeyNode | undefined)[];
  private readonly slowRoutes: (KeyNode | undefined)[];
  /** The record being placed, as its aggregates take it (derived once per record). */
  private readonly input: RequestInput;
  /** Provisional bias is checked every smallest slice of log time (provisional.ts). */
  private readonly provisionalEveryMs: number;
  private nextProvisionalCheck: number;

  constructor(
    readonly config: CoreConfig,
    readonly kind: AggregateKind,
    readonly state: CoreState = newCoreState(config),
  ) {
    const policies = state.clock.policies;
    this.referenceIndex = policies.length;
    this.eventTimePolicies = policies.filter((p) => p.eventTime);
    this.minArrivalLag = Math.min(...policies.filter((p) => !p.eventTime).map((p) => p.lagMs));
    this.driver = new InputDriver<WindowTimer>(state.clock, config.idleTimeoutMs, coreTimerBefore, {
      place: (e, out) => this.place(e, out),
      earlyTick: (p, out) => this.earlyTick(p, out),
      fire: (t, out) => this.fire(t, out),
      advanced: () => this.advanced(),
    });
    this.triggers = new CoreTriggers(this.driver, state.windowConfigs);
    this.input = new RequestInput(config.relativeAccuracy);
    this.dropStamps = new Float64Array(policies.length).fill(-1);
    this.lateStamps = new Float64Array(policies.length).fill(-1);
    this.slowAt = new Uint8Array(state.windowConfigs.length);
    this.slowNodes = state.windowConfigs.map(() => undefined);
    this.slowRoutes = state.windowConfigs.map(() => undefined);
    this.provisionalEveryMs = Math.min(...state.windowConfigs.map((c) => c.spec.sliceMs));
    const t = state.clock.logTime;
    this.nextProvisionalCheck = Number.isFinite(t)
      ? Math.floor(t / this.provisionalEveryMs) * this.provisionalEveryMs + this.provisionalEveryMs
      : -Infinity;
    // Timer queues are derived data: every window's pending timers (early ticks: the driver's).
    const horizon = config.referenceHorizonMs;
    for (const c of state.windowConfigs) for (const w of c.windows.values()) scheduleWindow(this.driver, horizon, w);
    this.updateMaxWatermark();
  }

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    this.driver.event(partition, e, out);
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    this.driver.heartbeat(partition, ingestTs, out);
  }

  /** Each percentile policy's delay quantile of `partition`, for the stage-1 partials (StreamCore.delayQuantiles). */
  delayQuantiles(partition: number): Record<string, number> | undefined {
    return this.driver.delayQuantiles(partition);
  }

  retire(partitions: readonly number[]): void {
    retirePartitions(this.state.clock, partitions);
  }

  advance(logTime: number, out: CoreOutput): void {
    this.driver.tick(logTime, out);
  }

  /** A merged tick of stage-1 partials (the merge stage, place-partial.ts). */
  partial(tick: PartialTick, out: CoreOutput): void {
    this.driver.partial(tick.at, tick.clocks, out, () => {
      this.triggers.out = out;
      const ctx = this.placeContext();
      for (const d of tick.deltas) placePartial(ctx, d as PartialAggregate);
    });
  }

  private placeContext(): PlaceContext {
    const configs = this.state.windowConfigs;
    return {
      configs,
      policies: this.state.clock.policies,
      kind: this.kind,
      triggers: this.triggers,
      maxWatermark: this.maxWatermark,
      eventsTotal: this.state.clock.eventsTotal,
      serviceName: (s) => this.state.keys.service(s, this.logTime),
      openSlice: (grid, start) => openSlice(this.driver, this.config.referenceHorizonMs, configs, grid, start),
    };
  }

  finish(out: CoreOutput): void {
    const ctx = this.triggers;
    ctx.out = out;
    const policies = this.state.clock.policies;
    for (const c of this.state.windowConfigs) {
      for (const w of [...c.windows.values()]) {
        for (const p of policies) {
          if ((w.kinds[p.index] as number) & KIND_FINAL) continue;
          if (emitsOnTime(p) && !((w.kinds[p.index] as number) & KIND_ON_TIME)) onTime(ctx, p, w);
          if (!((w.kinds[p.index] as number) & KIND_FINAL)) finalPane(ctx, p, w);
        }
        if (!((w.kinds[this.referenceIndex] as number) & KIND_FINAL)) referenceClose(ctx, w, policies);
      }
    }
  }

  status(): CoreStatus {
    return coreStatus(this.config, this.state);
  }

  snapshot(): Uint8Array {
    return encodeCoreSnapshot(this.config, this.state);
  }

  snapshotSteps(): SnapshotSteps {
    return encodeCoreSnapshotSteps(this.config, this.state);
  }

  private get logTime(): number {
    return this.state.clock.logTime;
  }

  private watermarkOf(p: PolicyState): number {
    return this.driver.watermarkOf(p);
  }

  /** After time moved: the fast-path bound, provisional bias checks, the TTL sweep of the key registry and the dials. */
  private advanced(): void {
    this.updateMaxWatermark();
    if (this.logTime >= this.nextProvisionalCheck) this.checkProvisional();
    if (!this.state.keys.maintain(this.logTime, this.config.keyTtlMs)) return;
    const cutoff = this.logTime - this.config.keyTtlMs;
    for (const c of this.state.windowConfigs) for (const dial of c.dials) sweepDial(dial, cutoff);
  }

  /**
   * Every `provisionalEveryMs` of log time (at the first input of each step), while a policy and
   * window size has no measured window yet, its provisional figures are recomputed (provisional.ts).
   * The next check is derived from log time, so a restored core checks when the original did.
   */
  private checkProvisional(): void {
    const step = this.provisionalEveryMs;
    this.nextProvisionalCheck = Math.floor(this.logTime / step) * step + step;
    for (const c of this.state.windowConfigs) measureProvisional(c, this.state.clock.policies, this.config.biasWindows);
  }

  private updateMaxWatermark(): void {
    let maxWatermark = this.logTime - this.minArrivalLag;
    for (const p of this.eventTimePolicies)
      if (p.eventTimeWatermark > maxWatermark) maxWatermark = p.eventTimeWatermark;
    this.maxWatermark = maxWatermark;
  }

  private earlyTick(p: PolicyState, out: CoreOutput): void {
    this.triggers.out = out;
    for (const c of this.state.windowConfigs) earlyTick(this.triggers, p, c.windows.values());
  }

  /** Runs a due timer's trigger (a timer of a window already freed does nothing). */
  private fire(t: WindowTimer, out: CoreOutput): void {
    const ctx = this.triggers;
    ctx.out = out;
    const w = this.state.windowConfigs[t.configIndex]?.windows.get(t.start);
    if (w === undefined) return;
    if (t.kind === WindowTimerKind.Reference) return referenceClose(ctx, w, this.state.clock.policies);
    const p = this.state.clock.policies[t.policy] as PolicyState;
    if ((w.kinds[p.index] as number) & KIND_FINAL) return;
    if (t.kind === WindowTimerKind.OnTime) onTime(ctx, p, w);
    else if (t.kind === WindowTimerKind.Final) finalPane(ctx, p, w);
    else lateFlush(ctx, p, w);
  }

  /**
   * Adds a record to the slice of each slice grid (docs/decisions/0022-sliced-windows.md), under its
   * service and route (capped by the key registry), and to the merges that hold that slice; then
   * classifies it where it is behind some policy's W.
   */
  private place(e: TelemetryEvent, out: CoreOutput): void {
    this.triggers.out = out;
    const names = this.names;
    names.service = undefined;
    names.route = undefined;
    const input = this.input.set(e.latency_ms, isError(e.status), this.kind.hashUser(e.user));
    const configs = this.state.windowConfigs;
    let slow = false;
    for (let i = 0; i < configs.length; i++) {
      const c = configs[i] as WindowConfigState;
      if (c.grid !== i) continue;
      const sliceMs = c.spec.sliceMs;
      const sliceStart = Math.floor(e.ts / sliceMs) * sliceMs;
      const last = c.lastSlice;
      let slice = last !== undefined && last.start === sliceStart ? last : c.slices.get(sliceStart);
      if (slice === undefined || slice.minEnd <= this.maxWatermark) {
        slice ??= openSlice(this.driver, this.config.referenceHorizonMs, configs, c, sliceStart);
        this.resolveNames(e);
        slow = true;
        this.slowAt[i] = 1;
        this.slowNodes[i] = undefined;
        this.slowRoutes[i] = undefined;
        if (slice === undefined) continue;
      }
      c.lastSlice = slice;
      slice.adds++;
      const node = this.serviceNode(slice, e);
      node.agg.addInput(input);
      const routeNode = this.routeNode(node, e);
      routeNode.agg.addInput(input);
      if (slice.foldedInto !== null) addFolded(slice, this.nodeService, this.nodeRoute, node, routeNode, input);
      if (this.slowAt[i] === 0) continue;
      this.slowNodes[i] = node;
      this.slowRoutes[i] = routeNode;
    }
    if (slow) this.classifyAll(e, out);
  }

  /** Slow path of `place`, in config order (late records and late marks come out as without shared grids). */
  private classifyAll(e: TelemetryEvent, out: CoreOutput): void {
    const configs = this.state.windowConfigs;
    for (const c of configs) {
      const g = c.grid;
      if (this.slowAt[g] === 0) continue;
      const sliceStart = Math.floor(e.ts / c.spec.sliceMs) * c.spec.sliceMs;
      this.classify(c, sliceStart, e, this.slowNodes[g], this.slowRoutes[g], out);
    }
    this.slowAt.fill(0);
  }

  /**
   * The key registry is asked only when a slice does not know the service or route yet (or on the
   * slow path), so "last seen" is precise to the smallest slice; folded names ask every time.
   */
  private resolveNames(e: TelemetryEvent): void {
    const names = this.names;
    names.service ??= this.state.keys.service(e.service, this.logTime);
    names.route ??= this.state.keys.route(names.service, e.route, this.logTime);
  }

  /** The slice's node of the record's service (its own name, or the name the cap gives it). */
  private serviceNode(slice: Slice, e: TelemetryEvent): KeyNode {
    const names = this.names;
    let node = slice.services.get(e.service);
    if (node !== undefined) {
      names.service ??= e.service;
      this.nodeService = e.service;
      return node;
    }
    const service = (names.service ??= this.state.keys.service(e.service, this.logTime));
    this.nodeService = service;
    node = slice.services.get(service);
    if (node === undefined)
      slice.services.set(
        service,
        (node = {
          agg: this.kind.create(),
          routes: new Map(),
          tracks: null,
          seen: this.state.clock.eventsTotal,
          folded: null,
        }),
      );
    return node;
  }

  private routeNode(serviceNode: KeyNode, e: TelemetryEvent): KeyNode {
    const routes = serviceNode.routes as Map<string, KeyNode>;
    let node = routes.get(e.route);
    if (node !== undefined) {
      this.nodeRoute = e.route;
      return node;
    }
    const names = this.names;
    const route = (names.route ??= this.state.keys.route(names.service as string, e.route, this.logTime));
    this.nodeRoute = route;
    node = routes.get(route);
    if (node === undefined)
      routes.set(
        route,
        (node = {
          agg: this.kind.create(true),
          routes: null,
          tracks: null,
          seen: this.state.clock.eventsTotal,
          folded: null,
        }),
      );
    return node;
  }

  /**
   * Slow path: the event is behind some policy's W for one of its windows. Runs after the add (the
   * aggregate takes the event if anyone still has the window open); only counts and marks.
   */
  private classify(
    c: WindowConfigState,
    sliceStart: number,
    e: TelemetryEvent,
    serviceKey: KeyNode | undefined,
    routeKey: KeyNode | undefined,
    out: CoreOutput,
  ): void {
    const spec = c.spec;
    const latest = lastWindowStart(spec, sliceStart);
    for (let start = firstWindowStart(spec, sliceStart); start <= latest; start += spec.slideMs) {
      const end = start + spec.sizeMs;
      const w = c.windows.get(start);
      // One window object for the late records of every policy that drops the event (read-only, as a pane's).
      let window: { start: number; end: number } | undefined;
      for (const p of this.state.clock.policies) {
        const watermark = this.watermarkOf(p);
        if (end > watermark) continue;
        if (end + p.cfg.graceMs <= watermark || w === undefined)
          this.drop(p, e, (window ??= { start, end }), watermark, out);
        else this.acceptLate(p, w, serviceKey, routeKey);
        if (w !== undefined && w.lateness !== null && w.ref === null) this.countLate(w.lateness, p, e);
      }
    }
  }

  /** The record is behind W + grace for one of its windows: counted, and a late record goes out. */
  private drop(
    p: PolicyState,
    e: TelemetryEvent,
    window: { start: number; end: number },
    watermark: number,
    out: CoreOutput,
  ): void {
    p.droppedWindowEvents++;
    if (firstFor(this.dropStamps, p.index, this.state.clock.eventsTotal)) p.droppedEvents++;
    const rec: LateRecord = { policy: p.cfg.name, reason: "behind-watermark", event: e, window, watermark };
    out.late(rec);
  }

  /**
   * The event missed the policy's on-time pane of a window of the smallest size the reference
   * still has open: counted for its service (docs/semantics.md, "Correlated lateness").
   */
  private countLate(lateness: Map<string, Float64Array>, p: PolicyState, e: TelemetryEvent): void {
    const service = this.names.service as string;
    let v = lateness.get(service);
    if (v === undefined) lateness.set(service, (v = new Float64Array(2 * this.referenceIndex)));
    v[2 * p.index] = (v[2 * p.index] as number) + 1;
    if (isError(e.status)) v[2 * p.index + 1] = (v[2 * p.index + 1] as number) + 1;
  }

  /** Late but within grace: counted, and its keys marked for the policy's late panes. */
  private acceptLate(p: PolicyState, w: Window, serviceKey: KeyNode | undefined, routeKey: KeyNode | undefined): void {
    p.lateAcceptedWindowEvents++;
    if (firstFor(this.lateStamps, p.index, this.state.clock.eventsTotal)) p.lateAcceptedEvents++;
    const service = this.names.service as string;
    const route = this.names.route as string;
    // A tumbling window's slice keys are their track nodes (no string lookups on repeated late events).
    const serviceTrack = serviceKey ? trackNodeOf(w, service, undefined, serviceKey) : trackNode(w, service, undefined);
    const routeTrack = routeKey ? trackNodeOf(w, service, route, routeKey) : trackNode(w, service, route);
    acceptLate(this.triggers, p, w, serviceTrack, routeTrack);
  }
}

/** True the first time `record` is seen for the policy (marks it). */
function firstFor(stamps: Float64Array, policy: number, record: number): boolean {
  if (stamps[policy] === record) return false;
  stamps[policy] = record;
  return true;
}
