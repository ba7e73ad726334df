/**
 * Snapshot codec of the session operator (docs/semantics.md, "Snapshot"): its whole SessionState —
 * log time, partition clocks, policy progress, pane sequence counters, the service registry, every
 * key with its open sessions and closed-session bounds, the early queues and bias windows. Timer
 * queues are not written: the operator rebuilds them from the decoded state (their order is
 * total), so a restored operator emits byte-identical panes. Layout: "TMSS" · version · config
 * CRC · body · CRC-32 of all before.
 */
import type { PaneValue } from "../../protocol.js";
import { ByteWriter, crc32, type ByteReader } from "../byte-codec.js";
import { sealSteps, unseal } from "./sealed-bytes.js";
import { allSteps } from "../snapshot-steps.js";
import { CoreError } from "../errors.js";
import type { CoreConfig, SnapshotSteps } from "../types.js";
import type { SessionConfig } from "./session-config.js";
import { NONE, newKeyState, type EmittedSession, type KeyState, type Session } from "./session-key.js";
import { newSessionState, type SessionState } from "./session-state.js";
import {
  readDelaySamples,
  readKeyRegistry,
  readPartitionClocks,
  readPolicyProgress,
  writeDelaySamples,
  writeKeyRegistry,
  writePartitionClocks,
  writePolicyProgress,
} from "../snapshot-parts.js";
import { keyIdOf } from "../window-state.js";

const MAGIC = [0x54, 0x4d, 0x53, 0x53];
/**
 * 2: bias samples carry usersPct. 3: partitions carry the log time of their last record (idleness
 * in log time), and the service registry (service cap) is written. 4: bias per service and stage
 * (on-time and final counts per metrics window, each policy's dial; a pane's stage slot).
 */
export const SESSION_SNAPSHOT_VERSION = 4;
/** (service, user) keys written per step: a key holds a few sessions per policy. */
const KEYS_PER_STEP = 64;
const VALUE_FIELDS = ["count", "errors", "errorRate", "p50", "p90", "p95", "p99", "p999", "users"] as const;

function configCrc(config: CoreConfig, sessions: SessionConfig): number {
  return crc32(new TextEncoder().encode(JSON.stringify([config, sessions])));
}

function corrupt(what: string): CoreError {
  return new CoreError("TM_SNAPSHOT_CORRUPT", `session snapshot ${what}: restore from an older checkpoint`);
}

function writeEmitted(w: ByteWriter, e: EmittedSession | null): void {
  w.bool(e !== null);
  if (e === null) return;
  for (const f of VALUE_FIELDS) w.f64(e.value[f]);
  w.uint(e.slot + 1);
  w.f64(e.start);
  w.f64(e.end);
  w.f64(e.session.durationMs);
  w.string(e.session.firstRoute);
  w.string(e.session.lastRoute);
}

function readEmitted(r: ByteReader): EmittedSession | null {
  if (!r.bool()) return null;
  const value = {} as PaneValue;
  for (const f of VALUE_FIELDS) value[f] = r.f64();
  return {
    value,
    slot: r.uint() - 1,
    start: r.f64(),
    end: r.f64(),
    session: { durationMs: r.f64(), firstRoute: r.string(), lastRoute: r.string() },
  };
}

function writeSession(w: ByteWriter, s: Session): void {
  w.uint(s.id);
  w.f64(s.period);
  for (const x of [s.firstTs, s.lastTs, s.lastLateAt]) w.f64(x);
  for (const x of [s.count, s.errors, s.stage, s.lateAccepted]) w.uint(x);
  w.string(s.firstRoute);
  w.string(s.lastRoute);
  w.bool(s.dirty);
  writeEmitted(w, s.last);
}

function readSession(r: ByteReader, policy: number, key: KeyState): Session {
  const id = r.uint();
  const period = r.f64();
  const [firstTs, lastTs, lastLateAt] = [r.f64(), r.f64(), r.f64()] as [number, number, number];
  const [count, errors, stage, lateAccepted] = [r.uint(), r.uint(), r.uint(), r.uint()] as [
    number,
    number,
    number,
    number,
  ];
  const firstRoute = r.string();
  const lastRoute = r.string();
  const dirty = r.bool();
  const last = readEmitted(r);
  return {
    id,
    policy,
    key,
    period,
    firstTs,
    lastTs,
    count,
    errors,
    firstRoute,
    lastRoute,
    stage,
    lastLateAt,
    dirty,
    lateAccepted,
    last,
    onTimeDue: NONE,
    finalDue: NONE,
    queued: false,
  };
}

/** Snapshot bytes of the operator's whole state. */
export function encodeSessionSnapshot(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  state: SessionState,
): Uint8Array {
  return allSteps(encodeSessionSnapshotSteps(config, sessions, state));
}

/**
 * The same bytes in steps (a yield after each service of the registry, every KEYS_PER_STEP keys and
 * each piece of the checksum); the state must not change until the last step
 * (docs/decisions/0016-checkpoints-without-pause.md).
 */
export function* encodeSessionSnapshotSteps(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  state: SessionState,
): SnapshotSteps {
  const w = new ByteWriter();
  for (const b of MAGIC) w.uint(b);
  w.uint(SESSION_SNAPSHOT_VERSION);
  w.uint(configCrc(config, sessions));
  const clock = state.clock;
  w.f64(clock.logTime);
  for (const x of [clock.eventsTotal, state.anonymous, state.merges, state.nextId]) w.uint(x);
  writePartitionClocks(w, clock.partitions);
  for (const p of clock.policies) {
    writePolicyProgress(w, p);
    w.uint(state.seqs[p.index] as number);
    writeDelaySamples(w, p);
  }
  w.f64(state.services.nextSweep);
  yield* writeKeyRegistry(w, state.services);
  for (const q of state.early) {
    const live = q.filter((s) => state.sessionsById.get(s.id) === s);
    w.uint(live.length);
    for (const s of live) w.uint(s.id);
  }
  yield* writeKeys(w, state);
  state.bias.encode(w);
  return yield* sealSteps(w);
}

function* writeKeys(w: ByteWriter, state: SessionState): Generator<void, void, void> {
  w.uint(state.keysById.size);
  let n = 0;
  for (const users of state.keys.values()) {
    for (const k of users.values()) {
      if (++n % KEYS_PER_STEP === 0) yield;
      w.uint(k.id);
      w.string(k.service);
      w.string(k.user);
      for (const p of state.clock.policies) {
        w.f64(k.closedUntil[p.index] as number);
        const list = k.sessions[p.index] as Session[];
        w.uint(list.length);
        for (const s of list) writeSession(w, s);
      }
    }
  }
}

/** Decodes a snapshot into an operator state; throws a coded CoreError on any mismatch. */
export function decodeSessionSnapshot(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  bytes: Uint8Array,
): SessionState {
  const r = unseal(bytes, "session snapshot");
  for (const b of MAGIC) if (r.uint() !== b) throw corrupt("does not start with the tidemark session magic");
  const version = r.uint();
  if (version !== SESSION_SNAPSHOT_VERSION)
    throw new CoreError(
      "TM_SNAPSHOT_VERSION",
      `session snapshot version ${version} is not ${SESSION_SNAPSHOT_VERSION}: start without it or use a matching tidemark`,
    );
  if (r.uint() !== configCrc(config, sessions))
    throw new CoreError(
      "TM_SNAPSHOT_CONFIG_MISMATCH",
      "session snapshot was taken with a different configuration: restore with the same policies, partitions and session settings, or start fresh",
    );
  const state = newSessionState(config, sessions);
  readState(state, r);
  if (!r.done) throw corrupt("has trailing bytes");
  return state;
}

function readState(state: SessionState, r: ByteReader): void {
  const clock = state.clock;
  clock.logTime = r.f64();
  clock.eventsTotal = r.uint();
  state.anonymous = r.uint();
  state.merges = r.uint();
  state.nextId = r.uint();
  readPartitionClocks(r, clock.partitions);
  for (const p of clock.policies) {
    readPolicyProgress(r, p);
    state.seqs[p.index] = r.uint();
    readDelaySamples(r, p, corrupt);
  }
  state.services.nextSweep = r.f64();
  readKeyRegistry(r, state.services);
  const early = state.early.map(() => Array.from({ length: r.uint() }, () => r.uint()));
  for (let n = r.uint(); n > 0; n--) readKey(state, r);
  early.forEach((ids, p) => {
    for (const id of ids) {
      const s = state.sessionsById.get(id);
      if (s === undefined) throw corrupt("queues a missing session");
      s.queued = true;
      state.early[p]?.push(s);
    }
  });
  state.bias.decode(r);
}

function readKey(state: SessionState, r: ByteReader): void {
  const id = r.uint();
  const service = r.string();
  const user = r.string();
  const policies = state.clock.policies;
  const k = newKeyState(id, service, user, keyIdOf(service, user), policies.length);
  let users = state.keys.get(service);
  if (users === undefined) state.keys.set(service, (users = new Map()));
  users.set(user, k);
  state.keysById.set(id, k);
  for (const p of policies) {
    k.closedUntil[p.index] = r.f64();
    const list = k.sessions[p.index] as Session[];
    for (let m = r.uint(); m > 0; m--) {
      const s = readSession(r, p.index, k);
      list.push(s);
      state.sessionsById.set(s.id, s);
    }
  }
}
