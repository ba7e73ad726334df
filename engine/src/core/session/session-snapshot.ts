/**
 * Snapshot codec of the session operator (docs/semantics.md, "Snapshot"): its whole SessionState —
 * log time, partition clocks, policy progress, pane sequence counters, the service registry, every
 * key with its lanes of shared session facts, each policy's views and closed-session bounds, the early
 * queues and bias windows. Timer
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
import { newKeyState, newSession, type KeyState, type Lane, type Session, type SessionFacts } from "./session-key.js";
import { sessionId, valueOf } from "./session-pane.js";
import type { PolicyState } from "../policy-state.js";
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
 * (on-time and final counts per metrics window, each policy's dial; a pane's stage slot). 5: keys
 * hold lanes of session facts shared by policies, each policy's open view of them
 * (docs/decisions/0018-shared-sessions.md).
 */
export const SESSION_SNAPSHOT_VERSION = 5;
/** (service, user) keys written per step: a key holds a few sessions per policy. */
const KEYS_PER_STEP = 64;
const VALUE_FIELDS = ["count", "errors", "errorRate", "p50", "p90", "p95", "p99", "p999", "users"] as const;

function configCrc(config: CoreConfig, sessions: SessionConfig): number {
  return crc32(new TextEncoder().encode(JSON.stringify([config, sessions])));
}

function corrupt(what: string): CoreError {
  return new CoreError("TM_SNAPSHOT_CORRUPT", `session snapshot ${what}: restore from an older checkpoint`);
}

/** The session's last pane (session-key.ts, `lastId`…): its full value, slot, window and session block. */
function writeLastPane(w: ByteWriter, s: Session): void {
  w.bool(s.lastId !== null);
  if (s.lastId === null) return;
  const value = valueOf(s.lastCount, s.lastErrors, 1);
  for (const f of VALUE_FIELDS) w.f64(value[f]);
  w.uint(s.lastSlot + 1);
  w.f64(s.lastStart);
  w.f64(s.lastEnd);
  w.f64(s.lastDurationMs);
  w.string(s.lastFirstRoute);
  w.string(s.lastLastRoute);
}

/** `idOf(start)`: the pane id of the session at that start (derived, not written). */
function readLastPane(r: ByteReader, s: Session, idOf: (start: number) => string): void {
  if (!r.bool()) return;
  const value = {} as PaneValue;
  for (const f of VALUE_FIELDS) value[f] = r.f64();
  // A last pane's value is the session's full value then (session-pane.ts): anything else is not ours.
  const full = valueOf(value.count, value.errors, 1);
  for (const f of VALUE_FIELDS) if (!Object.is(full[f], value[f])) throw corrupt(`last pane value ${f}`);
  s.lastCount = value.count;
  s.lastErrors = value.errors;
  s.lastSlot = r.uint() - 1;
  s.lastStart = r.f64();
  s.lastEnd = r.f64();
  s.lastDurationMs = r.f64();
  s.lastFirstRoute = r.string();
  s.lastLastRoute = r.string();
  s.lastId = idOf(s.lastStart);
}

function writeFacts(w: ByteWriter, f: SessionFacts): void {
  w.f64(f.period);
  w.f64(f.firstTs);
  w.f64(f.lastTs);
  w.uint(f.count);
  w.uint(f.errors);
  w.string(f.firstRoute);
  w.string(f.lastRoute);
}

function readFacts(r: ByteReader, lane: Lane, policies: number): SessionFacts {
  return {
    period: r.f64(),
    firstTs: r.f64(),
    lastTs: r.f64(),
    count: r.uint(),
    errors: r.uint(),
    firstRoute: r.string(),
    lastRoute: r.string(),
    lane,
    views: new Array<Session | null>(policies).fill(null),
    viewers: 0,
  };
}

function writeView(w: ByteWriter, s: Session): void {
  w.uint(s.id);
  w.f64(s.lastLateAt);
  for (const x of [s.stage, s.lateAccepted]) w.uint(x);
  w.bool(s.dirty);
  writeLastPane(w, s);
}

function readView(
  r: ByteReader,
  policy: number,
  key: KeyState,
  facts: SessionFacts,
  idOf: (start: number) => string,
): Session {
  const s = newSession(r.uint(), policy, key, facts);
  s.lastLateAt = r.f64();
  s.stage = r.uint();
  s.lateAccepted = r.uint();
  s.dirty = r.bool();
  readLastPane(r, s, idOf);
  return s;
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
    const live = q.filter((s) => s.live);
    w.uint(live.length);
    for (const s of live) w.uint(s.id);
  }
  yield* writeKeys(w, state);
  state.bias.encode(w);
  return yield* sealSteps(w);
}

function* writeKeys(w: ByteWriter, state: SessionState): Generator<void, void, void> {
  w.uint(state.keyCount);
  let n = 0;
  for (const users of state.keys.values()) {
    for (const k of users.values()) {
      if (++n % KEYS_PER_STEP === 0) yield;
      w.uint(k.id);
      w.string(k.service);
      w.string(k.user);
      for (const x of k.closedUntil) w.f64(x);
      w.uint(k.lanes.length);
      for (const lane of k.lanes) {
        w.uint(lane.policies.length);
        for (const i of lane.policies) w.uint(i);
        w.uint(lane.sessions.length);
        for (const f of lane.sessions) {
          writeFacts(w, f);
          for (const i of lane.policies) {
            const s = f.views[i] ?? null;
            w.bool(s !== null);
            if (s !== null) writeView(w, s);
          }
        }
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
  readState(state, r, sessions.gapMs);
  if (!r.done) throw corrupt("has trailing bytes");
  return state;
}

function readState(state: SessionState, r: ByteReader, gapMs: number): void {
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
  const byId = new Map<number, Session>();
  for (let n = r.uint(); n > 0; n--) readKey(state, r, gapMs, byId);
  early.forEach((ids, p) => {
    for (const id of ids) {
      const s = byId.get(id);
      if (s === undefined) throw corrupt("queues a missing session");
      s.queued = true;
      state.early[p]?.push(s);
    }
  });
  state.bias.decode(r);
}

function readKey(state: SessionState, r: ByteReader, gapMs: number, byId: Map<number, Session>): void {
  const id = r.uint();
  const service = r.string();
  const user = r.string();
  const policies = state.clock.policies;
  const k = newKeyState(id, service, user, keyIdOf(service, user), policies.length);
  let users = state.keys.get(service);
  if (users === undefined) state.keys.set(service, (users = new Map()));
  users.set(user, k);
  state.keyCount++;
  for (let i = 0; i < policies.length; i++) k.closedUntil[i] = r.f64();
  k.lanes.length = 0;
  const seen = new Set<number>();
  for (let n = r.uint(); n > 0; n--) {
    const lane: Lane = { sessions: [], policies: [] };
    for (let m = r.uint(); m > 0; m--) {
      const i = r.uint();
      if (i >= policies.length || seen.has(i)) throw corrupt("puts a policy in two lanes");
      seen.add(i);
      lane.policies.push(i);
    }
    for (let m = r.uint(); m > 0; m--) {
      const f = readFacts(r, lane, policies.length);
      for (const i of lane.policies) {
        if (!r.bool()) continue;
        const name = (policies[i] as PolicyState).cfg.name;
        const s = readView(r, i, k, f, (start) => sessionId(name, k.keyId, gapMs, start));
        f.views[i] = s;
        f.viewers++;
        k.open[i] = (k.open[i] as number) + 1;
        state.openSessions++;
        byId.set(s.id, s);
      }
      if (f.viewers === 0) throw corrupt("holds a session no policy has open");
      lane.sessions.push(f);
    }
    k.lanes.push(lane);
  }
  if (seen.size !== policies.length) throw corrupt("leaves a policy without a lane");
}
