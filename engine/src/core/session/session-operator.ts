/**
 * The session window operator (docs/semantics.md, "Session windows";
 * docs/decisions/0034-sessions-at-scale.md): a pure operator with StreamCore's driving interface.
 * Sessions are kept per (service, user) in rows of typed arrays shared by the policies that see the
 * same session (session-slots.ts, session-keys.ts); what it publishes are cells — per policy,
 * service and window, the sessions that ended there — as ordinary panes with their kinds, bias
 * and emit delay (cell-panes.ts, cell-triggers.ts). An InputDriver takes the inputs and keeps time
 * exactly as for the window core; this file wires it to placement (session-place.ts), the rows'
 * timers (slot-transitions.ts) and the cells' triggers.
 */
import { retirePartitions } from "../watermarks/clock-state.js";
import type { TelemetryEvent } from "../../protocol.js";
import { InputDriver } from "../watermarks/input-driver.js";
import type { PolicyState } from "../panes/policy-state.js";
import type { CoreConfig, CoreOutput, SnapshotSteps, StreamCore } from "../types.js";
import type { WindowTimer } from "../windows/window-timer.js";
import { earlyTick, finishCells, fireCellTimer, scheduleCellWindow } from "./cell-triggers.js";
import type { CellEmitContext } from "./cell-panes.js";
import type { SessionConfig } from "./session-config.js";
import type { SessionContext } from "./session-context.js";
import { placeEvent } from "./session-place.js";
import { encodeSessionSnapshot, encodeSessionSnapshotPieces, encodeSessionSnapshotSteps } from "./session-snapshot.js";
import type { PieceSteps } from "./sealed-bytes.js";
import { newSessionState, type SessionState } from "./session-state.js";
import { sessionStatus, type SessionStatus } from "./session-status.js";
import { PROXY_KIND, sessionTimerBefore, type SessionTimer, type SlotProxy } from "./session-timers.js";
import { SlotTimers } from "./slot-timers.js";
import { closeEveryRow, fireSlotTimer } from "./slot-transitions.js";

const NO_OUTPUT: CoreOutput = { pane: () => undefined, late: () => undefined };

export class SessionOperator implements StreamCore {
  private readonly driver: InputDriver<SessionTimer>;
  private readonly ctx: SessionContext;

  constructor(
    readonly config: CoreConfig,
    readonly sessions: Readonly<SessionConfig>,
    readonly state: SessionState = newSessionState(config, sessions),
  ) {
    const timers = new SlotTimers(state.clock.policies);
    this.driver = new InputDriver<SessionTimer>(state.clock, config.idleTimeoutMs, sessionTimerBefore, {
      place: (e, out) => this.place(e, out),
      earlyTick: (p, out) => this.earlyTick(p, out),
      fire: (t, out) => this.fire(t, out),
      advanced: () => {
        if (state.services.maintain(state.clock.logTime, config.keyTtlMs))
          state.dials.sweep(state.clock.logTime - config.keyTtlMs);
      },
    });
    timers.attach(this.driver);
    this.ctx = newContext(config, sessions, state, this.driver, timers);
    this.rearm();
  }

  /**
   * Timer queues are derived data: every row's and key's live timer at the due it was armed at (a
   * snapshot keeps those dues, so a restored operator fires exactly when the original would), every
   * window's triggers.
   */
  private rearm(): void {
    const { slots, keys, windows } = this.state;
    const timers = this.ctx.timers;
    for (let s = 0; s < slots.top; s++) {
      if (slots.mask[s] === 0) continue;
      slots.armed.forEach((at, clock) => {
        const due = at[s] as number;
        if (due < Infinity) timers.arm(clock, s, due);
      });
    }
    for (const k of keys.keys()) {
      const due = keys.armed[k] as number;
      if (due < Infinity) timers.arm(0, -1 - k, due);
    }
    for (const perSize of windows) for (const w of perSize.values()) scheduleCellWindow(this.ctx, w);
  }

  event(partition: number, e: TelemetryEvent, out: CoreOutput): void {
    this.driver.event(partition, e, out);
  }

  heartbeat(partition: number, ingestTs: number, out: CoreOutput): void {
    this.driver.heartbeat(partition, ingestTs, out);
  }

  finish(out: CoreOutput): void {
    this.withOutput(out, () => {
      closeEveryRow(this.ctx);
      finishCells(this.ctx);
    });
  }

  retire(partitions: readonly number[]): void {
    retirePartitions(this.state.clock, partitions);
  }

  advance(logTime: number, out: CoreOutput): void {
    this.driver.tick(logTime, out);
  }

  status(): SessionStatus {
    return sessionStatus(this.config, this.state, this.ctx.timers.bytes);
  }

  snapshot(): Uint8Array {
    return encodeSessionSnapshot(this.config, this.sessions, this.state);
  }

  snapshotSteps(): SnapshotSteps {
    return encodeSessionSnapshotSteps(this.config, this.sessions, this.state);
  }

  snapshotPieces(): PieceSteps {
    return encodeSessionSnapshotPieces(this.config, this.sessions, this.state);
  }

  private place(e: TelemetryEvent, out: CoreOutput): void {
    this.ctx.out = out;
    placeEvent(this.ctx, e);
    this.ctx.out = NO_OUTPUT;
  }

  // The driver's hooks and the slot timers' callback allocate nothing per call (no closure each time).
  private earlyTick(p: PolicyState, out: CoreOutput): void {
    this.ctx.out = out;
    earlyTick(this.ctx, p);
    this.ctx.out = NO_OUTPUT;
  }

  private fire(t: SessionTimer, out: CoreOutput): void {
    this.ctx.out = out;
    if (t.kind === PROXY_KIND) this.ctx.timers.fireProxy(t as SlotProxy, this.fireSlot);
    else fireCellTimer(this.ctx, t as WindowTimer);
    this.ctx.out = NO_OUTPUT;
  }

  private readonly fireSlot = (clock: number, id: number, due: number): void => fireSlotTimer(this.ctx, clock, id, due);

  private withOutput(out: CoreOutput, run: () => void): void {
    this.ctx.out = out;
    run();
    this.ctx.out = NO_OUTPUT;
  }
}

function newContext(
  config: CoreConfig,
  settings: Readonly<SessionConfig>,
  state: SessionState,
  driver: InputDriver<SessionTimer>,
  timers: SlotTimers,
): SessionContext {
  const ctx: SessionContext = {
    state,
    settings,
    referenceHorizonMs: config.referenceHorizonMs,
    relativeAccuracy: config.relativeAccuracy,
    keyTtlMs: config.keyTtlMs,
    driver,
    timers,
    out: NO_OUTPUT,
    emit: undefined as unknown as CellEmitContext,
  };
  const emit: CellEmitContext = {
    get logTime() {
      return state.clock.logTime;
    },
    get out() {
      return ctx.out;
    },
    watermarkOf: (p: PolicyState) => driver.watermarkOf(p),
    dialOf: (p: PolicyState, size: number) => state.dials.dialOf(p, size),
    sizeMs: (size: number) => state.sizes[size] as number,
  };
  return Object.assign(ctx, { emit });
}
