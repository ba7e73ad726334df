/**
 * Snapshot pieces of the measured dial (docs/semantics.md, "Snapshot"): bias trackers (their
 * samples, oldest first) and one policy's dial for one window size — per slot the pooled tracker
 * and emit delays, then every service with its trackers.
 */
import { BiasTracker, type BiasLabel } from "./bias.js";
import type { ByteReader, ByteWriter } from "../snapshot/byte-codec.js";
import { LatenessWindow } from "./lateness.js";
import { newProvisionalDial, newServiceKinds, type PolicyDial, type ProvisionalDial } from "./policy-dial.js";
import { readNullable, savedSlots, writeNullable } from "../snapshot/snapshot-parts.js";
import { LABELS, SLOTS } from "../panes/kind-slot.js";

/** A tracker or its absence: count, then per sample countPct, errorRatePp, p99Pct, usersPct (NaN = null). */
export function writeTracker(w: ByteWriter, t: BiasTracker | undefined): void {
  if (t === undefined) return w.uint(0);
  const samples = t.samples();
  w.uint(samples.length + 1);
  for (const s of samples) {
    writeNullable(w, s.countPct);
    writeNullable(w, s.errorRatePp);
    writeNullable(w, s.p99Pct);
    writeNullable(w, s.usersPct);
  }
}

export function readTracker(r: ByteReader, size: number, label: BiasLabel): BiasTracker | undefined {
  const n = r.uint();
  if (n === 0) return undefined;
  const t = new BiasTracker(size, label);
  for (let k = n - 1; k > 0; k--)
    t.push({
      countPct: readNullable(r),
      errorRatePp: readNullable(r),
      p99Pct: readNullable(r),
      usersPct: readNullable(r),
    });
  return t;
}

/** Per-slot trackers (each present or not). */
export function writeTrackers(w: ByteWriter, ts: readonly (BiasTracker | undefined)[]): void {
  for (let slot = 0; slot < SLOTS; slot++) writeTracker(w, ts[slot]);
}

export function readTrackers(
  r: ByteReader,
  into: (BiasTracker | undefined)[],
  size: number,
  labels: readonly BiasLabel[],
): void {
  const slots = savedSlots(r);
  for (let saved = 0; saved < slots.length; saved++) {
    const slot = slots[saved] as number;
    const t = readTracker(r, size, labels[Math.max(slot, 0)] as BiasLabel);
    if (slot >= 0) into[slot] = t;
  }
}

export function writePolicyDial(w: ByteWriter, dial: PolicyDial): void {
  w.uint(dial.closedWindows);
  for (let slot = 0; slot < SLOTS; slot++) {
    w.f64(dial.emitDelaySum[slot] as number);
    w.uint(dial.emitDelayCount[slot] as number);
  }
  writeTrackers(w, dial.pooled);
  writeTrackers(w, dial.pooledNowcastError);
  w.uint(dial.services.size);
  for (const [service, s] of dial.services) {
    w.string(service);
    w.f64(s.lastSeen);
    w.uint(s.seenWindow);
    writeTrackers(w, s.bias);
    writeTrackers(w, s.nowcastError);
    writeLateness(w, s.lateness);
  }
  writeProvisional(w, dial.provisional);
}

/** The provisional trackers while kept: pooled per slot, then per service. */
function writeProvisional(w: ByteWriter, prov: ProvisionalDial | null): void {
  w.bool(prov !== null);
  if (prov === null) return;
  writeTrackers(w, prov.pooled);
  w.uint(prov.services.size);
  for (const [service, ts] of prov.services) {
    w.string(service);
    writeTrackers(w, ts);
  }
}

function readProvisional(r: ByteReader, size: number): ProvisionalDial | null {
  if (!r.bool()) return null;
  const prov = newProvisionalDial();
  readTrackers(r, prov.pooled, size, LABELS.provisionalPolicy);
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    const ts = new Array<BiasTracker | undefined>(SLOTS).fill(undefined);
    readTrackers(r, ts, size, LABELS.provisionalService);
    prov.services.set(service, ts);
  }
  return prov;
}

export function readPolicyDial(r: ByteReader, dial: PolicyDial): void {
  dial.closedWindows = r.uint();
  const slots = savedSlots(r);
  for (let saved = 0; saved < slots.length; saved++) {
    const slot = slots[saved] as number;
    const sum = r.f64();
    const count = r.uint();
    if (slot < 0) continue;
    dial.emitDelaySum[slot] = sum;
    dial.emitDelayCount[slot] = count;
  }
  readTrackers(r, dial.pooled, dial.size, LABELS.policy);
  readTrackers(r, dial.pooledNowcastError, dial.size, LABELS.policy);
  for (let n = r.uint(); n > 0; n--) {
    const service = r.string();
    const s = newServiceKinds();
    s.lastSeen = r.f64();
    s.seenWindow = r.uint();
    readTrackers(r, s.bias, dial.size, LABELS.service);
    readTrackers(r, s.nowcastError, dial.size, LABELS.service);
    s.lateness = readLateness(r, dial.size);
    dial.services.set(service, s);
  }
  dial.provisional = readProvisional(r, dial.size);
}

/** A lateness window or its absence: rows oldest first, each on-time events, errors, late events, errors. */
function writeLateness(w: ByteWriter, l: LatenessWindow | null): void {
  if (l === null) return w.uint(0);
  const rows = l.rows();
  w.uint(rows.length + 1);
  for (const row of rows) for (const x of row) w.uint(x);
}

function readLateness(r: ByteReader, size: number): LatenessWindow | null {
  const n = r.uint();
  if (n === 0) return null;
  const l = new LatenessWindow(size);
  for (let k = n - 1; k > 0; k--) l.push(r.uint(), r.uint(), r.uint(), r.uint());
  return l;
}
