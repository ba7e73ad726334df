/**
 * Snapshot codec of the session operator (docs/semantics.md, "Snapshot"): its whole SessionState —
 * log time and counters, partition clocks, policy progress, the service registry, the session rows
 * (their typed-array columns as they are, free list included, so row and key indexes survive), the
 * keys (columns, then each held key's service and user), the cells (cell-snapshot.ts) and the dials.
 * Timer queues are not written: the operator re-arms every row, key and window at the dues the
 * snapshot holds, so a restored operator emits byte-identical panes. The rows and keys are copied
 * at the cut (SNAPSHOT_CAPTURED) and encoded after: the input waits for the copies only. Layout: "TMSS" · version ·
 * config CRC · body · CRC-32 of all before. Columns are written in the host's byte order
 * (little-endian on every platform Node supports for tidemark).
 */
import { V6_SLOTS } from "../panes/kind-slot.js";
import { hashedConfig } from "../snapshot/config-hash.js";
import { ByteWriter, crc32, type ByteReader } from "../snapshot/byte-codec.js";
import { CoreError } from "../errors.js";
import {
  readDelaySamples,
  readKeyRegistry,
  readPartitionClocks,
  readPolicyProgress,
  writeDelaySamples,
  writeKeyRegistry,
  writePartitionClocks,
  writePolicyProgress,
} from "../snapshot/snapshot-parts.js";
import { allSteps, joinSteps, writeBytesSteps } from "../snapshot/snapshot-steps.js";
import { SNAPSHOT_CAPTURED, type CoreConfig, type SnapshotSteps } from "../types.js";
import { readCells, writeCells } from "./cell-snapshot.js";
import { sealPiecesSteps, unseal, type PieceSteps } from "./sealed-bytes.js";
import type { SessionConfig } from "./session-config.js";
import type { CapturedKeys, SessionKeys } from "./session-keys.js";
import type { CapturedTable, SessionSlots } from "./session-slots.js";
import { newSessionState, type SessionState } from "./session-state.js";

const MAGIC = [0x54, 0x4d, 0x53, 0x53];
/**
 * 2: bias samples carry usersPct. 3: partitions carry the log time of their last record. 4: bias per
 * service and stage. 5: lanes of session facts shared by policies. 6: session rows in typed arrays,
 * cells per window size instead of per-session panes (docs/decisions/0034-sessions-at-scale.md).
 */
export const SESSION_SNAPSHOT_VERSION = 7;
/** Keys whose names are written per step (a power of two). */
const KEYS_PER_STEP = 4096;

type Column = Float64Array | Int32Array | Uint32Array | Uint8Array;

function configCrc(config: CoreConfig, sessions: SessionConfig): number {
  return crc32(new TextEncoder().encode(JSON.stringify([hashedConfig(config), sessions])));
}

function corrupt(what: string): CoreError {
  return new CoreError("TM_SNAPSHOT_CORRUPT", `session snapshot ${what}: restore from an older checkpoint`);
}

function bytesOf(c: Column, n: number): Uint8Array {
  return new Uint8Array(c.buffer, c.byteOffset, n * c.BYTES_PER_ELEMENT);
}

function readColumns(r: ByteReader, columns: readonly Column[], n: number): void {
  for (const c of columns) {
    const b = r.bytes();
    if (b.length !== n * c.BYTES_PER_ELEMENT) throw corrupt("has a session column of the wrong length");
    bytesOf(c, n).set(b);
  }
}

/** Table bookkeeping: rows used, the first free one (+1: −1 is none), live rows. */
function writeTop(w: ByteWriter, t: { top: number; firstFree: number; live: number }): void {
  for (const x of [t.top, t.firstFree + 1, t.live]) w.uint(x);
}

function readTop(r: ByteReader): [top: number, firstFree: number, live: number] {
  const top = r.uint();
  const firstFree = r.uint() - 1;
  const live = r.uint();
  if (firstFree >= top || live > top) throw corrupt("has a table past its end");
  return [top, firstFree, live];
}

function* writeSlots(w: ByteWriter, slots: CapturedTable): Generator<void, void, void> {
  writeTop(w, slots);
  for (const c of slots.columns) yield* writeBytesSteps(w, bytesOf(c, c.length));
}

function readSlots(r: ByteReader, slots: SessionSlots): void {
  slots.restore(...readTop(r));
  readColumns(r, slots.columns(), slots.top);
}

function* writeKeys(w: ByteWriter, keys: CapturedKeys): Generator<void, void, void> {
  writeTop(w, keys);
  for (const c of keys.columns) yield* writeBytesSteps(w, bytesOf(c, c.length));
  w.uint(keys.live);
  for (let k = 0; k < keys.top; k++) {
    const user = keys.user[k] as string;
    if (user === "") continue;
    w.uint(k);
    w.string(keys.services[keys.serviceIndex[k] as number] as string);
    w.string(user);
    if (k % KEYS_PER_STEP === 0) yield;
  }
}

function readKeys(r: ByteReader, keys: SessionKeys): void {
  const [top, firstFree, live] = readTop(r);
  keys.restore(top, firstFree, live);
  readColumns(r, [keys.head, keys.armed], top);
  readColumns(r, [keys.closed], top * keys.policies);
  const named = r.uint();
  if (named !== live) throw corrupt("names another number of keys than it holds");
  for (let n = named; n > 0; n--) {
    const k = r.uint();
    if (k >= top) throw corrupt("names a key past its key table");
    keys.restoreKey(k, r.string(), r.string());
  }
  keys.reindex();
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
 * The same bytes in steps (docs/decisions/0016-checkpoints-without-pause.md); the state must not
 * change until the last step.
 */
export function* encodeSessionSnapshotSteps(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  state: SessionState,
): SnapshotSteps {
  return yield* joinSteps(yield* encodeSessionSnapshotPieces(config, sessions, state));
}

/**
 * The same steps, the bytes left in pieces (their join is the snapshot): a snapshot that frames this
 * one takes them as they are (with-sessions.ts; docs/decisions/0053-session-timer-calendar.md).
 */
export function* encodeSessionSnapshotPieces(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  state: SessionState,
): PieceSteps {
  const w = new ByteWriter();
  for (const b of MAGIC) w.uint(b);
  w.uint(SESSION_SNAPSHOT_VERSION);
  w.uint(configCrc(config, sessions));
  const clock = state.clock;
  w.f64(clock.logTime);
  for (const x of [clock.eventsTotal, state.anonymous, state.overflowEvents, state.joins]) w.uint(x);
  writePartitionClocks(w, clock.partitions);
  for (const p of clock.policies) {
    writePolicyProgress(w, p);
    writeDelaySamples(w, p);
  }
  w.f64(state.services.nextSweep);
  yield* writeKeyRegistry(w, state.services);
  // The bulk — rows and keys — is copied and encoded after the input resumed; cells and dials are small.
  const slots = state.slots.capture();
  const keys = state.keys.capture();
  const rest = new ByteWriter();
  yield* writeCells(rest, state);
  state.dials.encode(rest);
  yield SNAPSHOT_CAPTURED;
  try {
    yield* writeSlots(w, slots);
    yield* writeKeys(w, keys);
  } finally {
    slots.release();
    keys.release();
  }
  w.adopt(rest.chunks());
  return yield* sealPiecesSteps(w);
}

/** Decodes a snapshot into an operator state; throws a coded CoreError on any mismatch. */
export function decodeSessionSnapshot(
  config: CoreConfig,
  sessions: Readonly<SessionConfig>,
  bytes: Uint8Array,
): SessionState {
  const r = unseal(bytes, "session snapshot");
  for (const b of MAGIC) if (r.uint() !== b) throw corrupt("is not a session snapshot");
  const version = r.uint();
  if (version !== SESSION_SNAPSHOT_VERSION && version !== 6)
    throw new CoreError(
      "TM_SNAPSHOT_VERSION",
      `session snapshot version ${version} is not ${SESSION_SNAPSHOT_VERSION}: start with a fresh data directory (the engine replays TM_EVENTS)`,
    );
  if (version === 6) r.slotMap = V6_SLOTS;
  if (r.uint() !== configCrc(config, sessions))
    throw new CoreError(
      "TM_SNAPSHOT_CONFIG_MISMATCH",
      "session snapshot was taken with another configuration: restore with the same policies, partitions and session settings",
    );
  const state = newSessionState(config, sessions);
  const clock = state.clock;
  clock.logTime = r.f64();
  clock.eventsTotal = r.uint();
  state.anonymous = r.uint();
  state.overflowEvents = r.uint();
  state.joins = r.uint();
  readPartitionClocks(r, clock.partitions);
  for (const p of clock.policies) {
    readPolicyProgress(r, p);
    readDelaySamples(r, p, corrupt);
  }
  state.services.nextSweep = r.f64();
  readKeyRegistry(r, state.services);
  readSlots(r, state.slots);
  readKeys(r, state.keys);
  readCells(r, state, config.relativeAccuracy, corrupt);
  state.dials.decode(r);
  if (!r.done) throw corrupt("has trailing bytes");
  return state;
}
