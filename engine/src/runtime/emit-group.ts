/**
 * EmitGroup: what the core emits while handling one merged input item (an event or a heartbeat),
 * as TM_PANES and TM_LATE messages (docs/decisions/0012-batched-transport.md). Panes go to
 * `tm.panes.<policy>.<windowSize>` (session panes to `tm.panes.<policy>.sessions`), late records
 * to `tm.late.<policy>`; per subject the JSON of each, in emission order, one per line
 * (encodePaneBatch), split into chunks of at most MAX_BATCH_UNITS.
 *
 * Each message's `Nats-Msg-Id` is `<partition>|<stream sequence>|<index in batch>|<subject>|<chunk>`:
 * the input item's place in the log, which a replay reaches with the same core state (checkpoints
 * are taken between items), so it emits the same group and the stream deduplicates it. The chunk
 * bound counts a pane's JSON without its one wall-clock field (`pipelineLagMs`), so a replay cuts
 * the same chunks.
 *
 * Pure but for the clock given: stamps `pipelineLagMs` = wall clock − log time at emission.
 */
import type { CoreOutput } from "../core/types.js";
import {
  encodePaneBatch,
  lateSubject,
  panesSubject,
  sessionPanesSubject,
  type LateRecord,
  type Pane,
} from "../protocol.js";

/**
 * Bound on one message, in UTF-16 units of its lines (wall-clock field aside). A UTF-16 unit is at
 * most 3 bytes of UTF-8 and a `pipelineLagMs` at most 16 digits, so a chunk stays under 1 MiB,
 * NATS' default max_payload (MIN_MAX_PAYLOAD), with room for headers.
 */
export const MAX_BATCH_UNITS = 256 * 1024;
/** The max_payload a server must allow for the largest chunk (checked at start). */
export const MIN_MAX_PAYLOAD = 1024 * 1024;

/** Where an input item sits in TM_EVENTS: its partition, its message's stream sequence, its index there (0 for a heartbeat). */
export interface ItemPlace {
  partition: number;
  seq: number;
  index: number;
}

export interface GroupMessage {
  subject: string;
  msgId: string;
  body: string;
  /** Panes or late records in the body. */
  records: number;
}

interface SubjectChunks {
  readonly closed: string[][];
  lines: string[];
  units: number;
}

export class EmitGroup implements CoreOutput {
  private readonly subjects = new Map<string, SubjectChunks>();
  private wall = 0;

  constructor(private readonly clock: () => number) {}

  get empty(): boolean {
    return this.subjects.size === 0;
  }

  pane(p: Pane): void {
    if (this.subjects.size === 0) this.wall = this.clock();
    p.pipelineLagMs = this.wall - p.emittedAt;
    const json = JSON.stringify(p);
    const subject = p.session ? sessionPanesSubject(p.policy) : panesSubject(p.policy, p.window.end - p.window.start);
    this.add(subject, json, json.length - String(p.pipelineLagMs).length);
  }

  late(r: LateRecord): void {
    if (this.subjects.size === 0) this.wall = this.clock();
    const json = JSON.stringify(r);
    this.add(lateSubject(r.policy), json, json.length);
  }

  /** The group's messages, subjects in order of first emission; the group is empty afterwards. */
  seal(place: ItemPlace): GroupMessage[] {
    const out: GroupMessage[] = [];
    const at = `${place.partition}|${place.seq}|${place.index}|`;
    for (const [subject, s] of this.subjects) {
      if (s.lines.length > 0) s.closed.push(s.lines);
      s.closed.forEach((lines, chunk) =>
        out.push({ subject, msgId: `${at}${subject}|${chunk}`, body: encodePaneBatch(lines), records: lines.length }),
      );
    }
    this.subjects.clear();
    return out;
  }

  private add(subject: string, json: string, units: number): void {
    let s = this.subjects.get(subject);
    if (!s) this.subjects.set(subject, (s = { closed: [], lines: [], units: 0 }));
    if (s.lines.length > 0 && s.units + units + 1 > MAX_BATCH_UNITS) {
      s.closed.push(s.lines);
      s.lines = [];
      s.units = 0;
    }
    s.lines.push(json);
    s.units += units + 1;
  }
}
