/**
 * The pane bodies' encodings measured against each other on the run's own records
 * (runtime.ts, "Throughput"; docs/decisions/0047-binary-panes.md): the JSON path (JsonLines),
 * the binary pane encoding (PaneRecords), and each gzip-compressed at the level engines use
 * (compressPaneBody), written into bodies of as many records as the engine's run put in one; then
 * the readers' side, decodePaneBody of each (the JSON text every edge gets). Rounds alternate
 * between the encodings in one process; each figure is the best of ROUNDS (CPU of this process,
 * the writer runs on one thread).
 */
import { JsonLines, PaneRecords, type LateRecord, type Pane } from "../protocol.js";
import { compressPaneBody, decodePaneBody } from "../nats/index.js";
import { row } from "./runtime-setup.js";

const ROUNDS = 5;

interface Encoding {
  name: string;
  write(records: ReadonlyArray<Pane | LateRecord>, per: number): Uint8Array[];
}

function bodies(
  records: ReadonlyArray<Pane | LateRecord>,
  per: number,
  w: { add(r: object): number; take(): Uint8Array },
  gzip: boolean,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < records.length; i += per) {
    for (let j = i; j < Math.min(records.length, i + per); j++) w.add(records[j] as object);
    const body = w.take();
    out.push(gzip ? compressPaneBody(body) : body);
  }
  return out;
}

const ENCODINGS: Encoding[] = [
  { name: "JSON (JsonLines)", write: (rs, per) => bodies(rs, per, new JsonLines(64 * 1024), false) },
  { name: "JSON, gzip level 1", write: (rs, per) => bodies(rs, per, new JsonLines(64 * 1024), true) },
  { name: "binary (PaneRecords)", write: (rs, per) => bodies(rs, per, new PaneRecords(64 * 1024), false) },
  { name: "binary, gzip level 1", write: (rs, per) => bodies(rs, per, new PaneRecords(64 * 1024), true) },
];

function cpu<T>(f: () => T): { ms: number; out: T } {
  const c0 = process.cpuUsage();
  const out = f();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, out };
}

/**
 * Rows: per encoding its bytes, the writer's CPU and decodePaneBody's, best of ROUNDS, alternating;
 * and the binary writer's CPU (what the engine writes now), for the floor's budget.
 */
export function encodingRows(
  records: ReadonlyArray<Pane | LateRecord>,
  messages: number,
): { rows: string[]; binaryMs: number } {
  const per = Math.max(1, Math.ceil(records.length / Math.max(1, messages)));
  const best = ENCODINGS.map(() => ({ write: Infinity, read: Infinity, bytes: 0, bodies: 0 }));
  for (let round = 0; round < ROUNDS; round++)
    ENCODINGS.forEach((e, i) => {
      const b = best[i] as (typeof best)[number];
      const written = cpu(() => e.write(records, per));
      const read = cpu(() => {
        let lines = 0;
        for (const body of written.out) lines += decodePaneBody(body).length;
        return lines;
      });
      if (read.out !== records.length) throw new Error(`${e.name}: ${read.out} records read of ${records.length}`);
      b.write = Math.min(b.write, written.ms);
      b.read = Math.min(b.read, read.ms);
      b.bytes = written.out.reduce((n, x) => n + x.length, 0);
      b.bodies = written.out.length;
    });
  const json = best[0] as (typeof best)[number];
  const rows = [
    row(
      `  pane body encodings on the run's ${records.length.toLocaleString("en-US")} records, ${per} per body (docs/decisions/0047), best of ${ROUNDS} alternating`,
      "",
      "",
    ),
    ...ENCODINGS.map((e, i) => {
      const b = best[i] as (typeof best)[number];
      return row(
        `    ${e.name}: write CPU; bytes`,
        `${b.write.toFixed(0)} ms`,
        `${(b.bytes / 1e6).toFixed(2)} MB (${(b.bytes / json.bytes).toFixed(3)}× JSON), ${(b.write / json.write).toFixed(2)}× JSON's write CPU; decodePaneBody to JSON text ${b.read.toFixed(0)} ms`,
      );
    }),
  ];
  return { rows, binaryMs: (best[2] as (typeof best)[number]).write };
}
