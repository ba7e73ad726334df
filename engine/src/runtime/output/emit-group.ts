/**
 * EmitGroup: what the core emits while handling the items of one TM_EVENTS message (its events,
 * or its heartbeat), as TM_PANES and TM_LATE messages (docs/decisions/0012-batched-transport.md).
 * Panes go to `tm.panes.<policy>.<windowSize>` (session panes to `tm.panes.<policy>.sessions`),
 * late records to `tm.late.<policy>`; per subject the records in emission order, in the binary
 * pane encoding (PaneRecords, docs/protocol.md "Pane bodies", docs/decisions/0047-binary-panes.md),
 * cut into chunks of at most MAX_BATCH_UNITS bytes. A chunk goes out when it is full, the last one
 * of each subject when the message's last item has been handled (`seal`).
 *
 * Each message's `Nats-Msg-Id` is `<partition>|<stream sequence>|<subject>|b<chunk>` (with
 * `<stream sequence>.<part>` for a run's later items, `part`): the input message's place in the
 * log ("b": binary chunks, cut otherwise than the JSON chunks an engine before it wrote under
 * `…|<chunk>`, so a replay across an upgrade is never taken for their duplicate). The core is deterministic and the merge's order fixed, so a replay handles the same
 * items from the same state and emits the same group; a group still open at a checkpoint travels
 * in it (`state()`: its records' JSON, restored by the constructor), so a restore completes it
 * exactly: a record's encoding is a function of its JSON (pane-records.ts). The chunk bound counts
 * a pane's bytes without its one wall-clock field (`pipelineLagMs`), so a replay cuts the same chunks.
 *
 * Pure but for the clock given: stamps `pipelineLagMs` = wall clock − log time at emission.
 */
import type { CoreOutput } from "../../core/types.js";
import {
  lateSubject,
  type LineBuffers,
  numberBytes,
  PaneRecords,
  panesSubject,
  readPaneRecords,
  sessionPanesSubject,
  type LateRecord,
  type Pane,
} from "../../protocol.js";

/**
 * Bound on one message, in bytes of its records (wall-clock field aside, one more per record). A
 * `pipelineLagMs` takes at most 9 bytes and a record at least 8, so a chunk stays under 1 MiB,
 * NATS' default max_payload (MIN_MAX_PAYLOAD), with room for headers.
 */
export const MAX_BATCH_UNITS = 256 * 1024;
/** The max_payload a server must allow for the largest chunk (checked at start). */
export const MIN_MAX_PAYLOAD = 1024 * 1024;

/** A body's first buffer: most bodies (one TM_EVENTS message's panes on one subject) fit. */
const WRITER_BYTES = 64 * 1024;

/**
 * Idle writers, per buffer source, for the next groups: a writer keeps the shapes it has seen
 * across bodies (what it writes into a body does not depend on them), so a group does not build
 * them again. At most MAX_IDLE_WRITERS per source.
 */
const idleWriters = new WeakMap<object, PaneRecords[]>();
const NO_BUFFERS = {};
const MAX_IDLE_WRITERS = 64;

/**
 * Subjects by policy and window size (0: late records, −1: session panes), made once: building
 * one per record made a fresh string the subject map hashed each time. Policies come from the
 * config, yet the cache is bounded (MAX_SUBJECTS, then cleared).
 */
const subjects = new Map<string, Map<number, string>>();
let subjectCount = 0;
const MAX_SUBJECTS = 1024;
const LATE = 0;
const SESSIONS = -1;

function subjectOf(policy: string, size: number): string {
  let bySize = subjects.get(policy);
  const known = bySize?.get(size);
  if (known !== undefined) return known;
  if (subjectCount >= MAX_SUBJECTS) {
    subjects.clear();
    subjectCount = 0;
    bySize = undefined;
  }
  if (bySize === undefined) subjects.set(policy, (bySize = new Map()));
  const made =
    size === LATE ? lateSubject(policy) : size === SESSIONS ? sessionPanesSubject(policy) : panesSubject(policy, size);
  bySize.set(size, made);
  subjectCount++;
  return made;
}

export interface GroupMessage {
  subject: string;
  msgId: string;
  /** The records in the binary pane encoding (PaneRecords); the receiver owns its buffer. */
  body: Uint8Array;
  /** Panes or late records in the body. */
  records: number;
}

/** An open group as a checkpoint keeps it: per subject the next chunk's number and its records' JSON so far. */
export interface EmitGroupState {
  partition: number;
  seq: number;
  subjects: Array<{ subject: string; chunk: number; lines: string[]; units: number }>;
}

interface SubjectChunk {
  chunk: number;
  lines: PaneRecords;
  /** The bound's count: each record's bytes without the wall-clock field, plus one. */
  units: number;
}

export class EmitGroup implements CoreOutput {
  private readonly subjects = new Map<string, SubjectChunk>();

  constructor(
    readonly partition: number,
    readonly seq: number,
    private readonly send: (m: GroupMessage) => void,
    private readonly clock: () => number,
    restored?: EmitGroupState,
    /** Where the bodies' buffers come from (BodyBuffers: reused once their message is acknowledged). */
    private readonly buffers?: LineBuffers,
    /**
     * The item's place in its message when one message holds several handled apart (a merge
     * operator's run of partial batches, docs/decisions/0054-partial-runs.md): part k > 0 writes
     * its ids under `<seq>.<k>`. Such groups are sealed at once (no state is kept of them).
     */
    readonly part = 0,
  ) {
    for (const s of restored?.subjects ?? []) {
      const lines = this.writer();
      for (const json of s.lines) lines.add(JSON.parse(json) as object);
      this.subjects.set(s.subject, { chunk: s.chunk, lines, units: s.units });
    }
  }

  pane(p: Pane): void {
    p.pipelineLagMs = this.clock() - p.emittedAt;
    const subject = subjectOf(p.policy, p.sessions ? SESSIONS : p.window.end - p.window.start);
    this.add(subject, p, numberBytes(p.pipelineLagMs));
  }

  late(r: LateRecord): void {
    this.add(subjectOf(r.policy, LATE), r, 0);
  }

  /** Sends the last chunk of every subject: the message's last item has been handled. */
  seal(): void {
    for (const [subject, s] of this.subjects) {
      const records = s.lines.lines;
      if (records > 0) this.emit(subject, s, s.lines.take(), records);
      s.lines.release();
      const idle = this.idle();
      if (idle.length < MAX_IDLE_WRITERS) idle.push(s.lines);
    }
    this.subjects.clear();
  }

  /** What a checkpoint keeps of the group while the message is still being handled. */
  state(): EmitGroupState {
    return {
      partition: this.partition,
      seq: this.seq,
      // Copies: the checkpoint is encoded later, after more lines may have been added.
      subjects: [...this.subjects].map(([subject, s]) => ({
        subject,
        chunk: s.chunk,
        lines: s.lines.lines > 0 ? readPaneRecords(s.lines.body()).map((r) => JSON.stringify(r)) : [],
        units: s.units,
      })),
    };
  }

  /** Writes the record; a record that would take the chunk past the bound starts the next chunk. */
  private add(subject: string, record: Pane | LateRecord, exempt: number): void {
    let s = this.subjects.get(subject);
    if (!s) this.subjects.set(subject, (s = { chunk: 0, lines: this.writer(), units: 0 }));
    const units = s.lines.add(record) - exempt;
    if (s.lines.lines > 1 && s.units + units + 1 > MAX_BATCH_UNITS) {
      // Its strings may be defined in this body: it goes into the next one written afresh.
      s.lines.dropLast();
      const records = s.lines.lines;
      this.emit(subject, s, s.lines.take(), records);
      s.units = s.lines.add(record) - exempt + 1;
      return;
    }
    s.units += units + 1;
  }

  private idle(): PaneRecords[] {
    const key = this.buffers ?? NO_BUFFERS;
    let idle = idleWriters.get(key);
    if (idle === undefined) idleWriters.set(key, (idle = []));
    return idle;
  }

  private writer(): PaneRecords {
    return this.idle().pop() ?? new PaneRecords(WRITER_BYTES, this.buffers);
  }

  private emit(subject: string, s: SubjectChunk, body: Uint8Array, records: number): void {
    const at = this.part === 0 ? `${this.seq}` : `${this.seq}.${this.part}`;
    const msgId = `${this.partition}|${at}|${subject}|b${s.chunk}`;
    this.send({ subject, msgId, body, records });
    s.chunk++;
    s.units = 0;
  }
}
