/**
 * The JetStream streams of tidemark (docs/decisions/0005-ingest.md, "Streams") and `ensureStream`,
 * which creates a missing stream and refuses — with a coded, actionable error — to run against an
 * existing stream whose configuration differs. It never alters an existing stream: changing
 * retention or the duplicate window under a running system silently changes what "stored" and
 * "deduplicated" mean.
 */
import { JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import type { JetStreamManager, StreamConfig } from "@nats-io/jetstream";
import { STREAM_CHECKPOINTS, STREAM_EVENTS, STREAM_LATE, STREAM_PANES, STREAM_PARTIALS } from "../protocol.js";
import { StreamMismatchError } from "./errors.js";

const NS_PER_MS = 1_000_000;
const HOUR_MS = 3_600_000;

/** What tidemark requires of a stream; every field is checked against an existing stream. */
export interface StreamSpec {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly storage: StorageType;
  readonly retention: RetentionPolicy;
  /** Messages older than this are removed (ms). */
  readonly maxAgeMs: number;
  /** Nats-Msg-Id deduplication window (ms). */
  readonly duplicateWindowMs: number;
}

export interface StreamSpecOptions {
  maxAgeMs?: number;
  duplicateWindowMs?: number;
}

/**
 * TM_EVENTS: `tm.events.<p>`, file, limits, 24 h, dedupe 2 min (docs/decisions/0005-ingest.md,
 * "Streams"). Any P fits `tm.events.*`.
 */
export function eventsStreamSpec(opts: StreamSpecOptions = {}): StreamSpec {
  return spec(STREAM_EVENTS, ["tm.events.*"], opts);
}

/** TM_PANES: `tm.panes.<policy>.<windowSize>`, deduplicated on `Nats-Msg-Id = id#seq`. */
export function panesStreamSpec(opts: StreamSpecOptions = {}): StreamSpec {
  return spec(STREAM_PANES, ["tm.panes.>"], opts);
}

/** TM_LATE: `tm.late.<policy>`: events dropped by a policy, with the reason. */
export function lateStreamSpec(opts: StreamSpecOptions = {}): StreamSpec {
  return spec(STREAM_LATE, ["tm.late.>"], opts);
}

/**
 * TM_PARTIALS: `tm.partials.<mergePartition>`: stage-1 partial aggregates for the merge stage,
 * deduplicated on `Nats-Msg-Id = partial:<worker>:<from>` (docs/decisions/0029-two-stage-dataflow.md).
 */
export function partialsStreamSpec(opts: StreamSpecOptions = {}): StreamSpec {
  return spec(STREAM_PARTIALS, ["tm.partials.*"], opts);
}

/**
 * TM_CHECKPOINTS: `tm.checkpoints.>`: the aligned checkpoints' coordination (start, acks,
 * completion, aborts; docs/decisions/0031-aligned-checkpoints.md). Small, a few messages per
 * checkpoint; the newest `tm.checkpoints.complete` is where recovery starts.
 */
export function checkpointsStreamSpec(opts: StreamSpecOptions = {}): StreamSpec {
  return spec(STREAM_CHECKPOINTS, ["tm.checkpoints.>"], opts);
}

/** Every stream of tidemark, in the order roles ensure them. */
export function allStreamSpecs(opts: StreamSpecOptions = {}): StreamSpec[] {
  return [
    eventsStreamSpec(opts),
    panesStreamSpec(opts),
    lateStreamSpec(opts),
    partialsStreamSpec(opts),
    checkpointsStreamSpec(opts),
  ];
}

function spec(name: string, subjects: string[], opts: StreamSpecOptions): StreamSpec {
  return Object.freeze({
    name,
    subjects: Object.freeze(subjects),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    maxAgeMs: opts.maxAgeMs ?? 24 * HOUR_MS,
    duplicateWindowMs: opts.duplicateWindowMs ?? 2 * 60_000,
  });
}

/** The StreamConfig that `spec` creates. */
export function streamConfigOf(s: StreamSpec): Partial<StreamConfig> & { name: string } {
  return {
    name: s.name,
    subjects: [...s.subjects],
    storage: s.storage,
    retention: s.retention,
    max_age: s.maxAgeMs * NS_PER_MS,
    duplicate_window: s.duplicateWindowMs * NS_PER_MS,
  };
}

/** Fields where `actual` differs from `s`, as "field: expected X, found Y". */
export function streamDifferences(s: StreamSpec, actual: StreamConfig): string[] {
  const want = streamConfigOf(s);
  const diffs: string[] = [];
  const wantSubjects = [...s.subjects].sort().join(",");
  const haveSubjects = [...(actual.subjects ?? [])].sort().join(",");
  if (wantSubjects !== haveSubjects) diffs.push(`subjects: expected [${wantSubjects}], found [${haveSubjects}]`);
  for (const field of ["storage", "retention", "max_age", "duplicate_window"] as const) {
    if (want[field] !== actual[field])
      diffs.push(`${field}: expected ${String(want[field])}, found ${String(actual[field])}`);
  }
  return diffs;
}

/**
 * Creates the stream when missing; when it exists, checks it against the spec and throws
 * StreamMismatchError (TM_STREAM_MISMATCH) on any difference. Never updates a stream.
 * Returns "created" or "exists".
 */
export async function ensureStream(jsm: JetStreamManager, s: StreamSpec): Promise<"created" | "exists"> {
  const existing = await infoOrUndefined(jsm, s.name);
  if (existing === undefined) {
    try {
      await jsm.streams.add(streamConfigOf(s));
      return "created";
    } catch (err) {
      // Another process may have created it between our info and add: check what it made.
      const raced = await infoOrUndefined(jsm, s.name);
      if (raced === undefined) throw err;
      return check(s, raced);
    }
  }
  return check(s, existing);
}

function check(s: StreamSpec, actual: StreamConfig): "exists" {
  const diffs = streamDifferences(s, actual);
  if (diffs.length > 0) throw new StreamMismatchError(s.name, diffs);
  return "exists";
}

async function infoOrUndefined(jsm: JetStreamManager, name: string): Promise<StreamConfig | undefined> {
  try {
    return (await jsm.streams.info(name)).config;
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw err;
  }
}
