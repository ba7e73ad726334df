/** Checkpoint/restore midway gives byte-identical output (docs/semantics.md, "Session windows"). */
import { describe, expect, it } from "vitest";
import { type LateRecord, type Pane, type TelemetryEvent } from "../../protocol.js";
import { DEFAULT_POLICIES, defaultCoreConfig } from "../default-config.js";
import { CoreError } from "../errors.js";
import { simulate } from "../simulation.js";
import type { CoreConfig, CoreOutput } from "../types.js";
import { crc32 } from "../byte-codec.js";
import { createSessionOperator, restoreSessionOperator, SESSION_SNAPSHOT_VERSION, type SessionCore } from "./index.js";

const SESSIONS = { gap: "15s", maxLength: "2m" };

function config(): CoreConfig {
  return {
    ...defaultCoreConfig(),
    partitions: 3,
    serviceCap: 2,
    policies: [
      ...DEFAULT_POLICIES.map((p) => ({ ...p })),
      {
        name: "bounded",
        label: "bounded 5 s",
        watermark: { kind: "bounded", lagMs: 5_000 },
        graceMs: 20_000,
        earlyEveryMs: 2_000,
        lateEveryMs: 500,
        mode: "discarding",
      },
      {
        name: "pct",
        label: "p95 delay",
        watermark: { kind: "percentile", q: 0.95, sample: 200 },
        graceMs: 10_000,
        earlyEveryMs: null,
        lateEveryMs: 1_000,
        mode: "retracting",
      },
    ],
  };
}

type Step =
  { kind: "event"; partition: number; e: TelemetryEvent } | { kind: "heartbeat"; partition: number; ts: number };

function steps(): Step[] {
  const events = simulate({ seed: 5, events: 2_500, services: 4, users: 60, tail: 0.1, tailMaxMs: 60_000 });
  const out: Step[] = [];
  let nextBeat = -Infinity;
  for (const e of events) {
    if (e.ingest_ts >= nextBeat) {
      for (let partition = 0; partition < 3; partition++) out.push({ kind: "heartbeat", partition, ts: e.ingest_ts });
      nextBeat = e.ingest_ts + 1_000;
    }
    // Services a–d on partitions 0, 1, 2, 0: every partition carries events (event-time W advances).
    out.push({ kind: "event", partition: (e.service.charCodeAt(0) - 97) % 3, e });
  }
  return out;
}

function collector(): { out: CoreOutput; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: { pane: (p: Pane) => lines.push(JSON.stringify(p)), late: (r: LateRecord) => lines.push(JSON.stringify(r)) },
  };
}

function feed(op: SessionCore, list: readonly Step[], out: CoreOutput): void {
  for (const s of list) {
    if (s.kind === "event") op.event(s.partition, s.e, out);
    else op.heartbeat(s.partition, s.ts, out);
  }
}

describe("session operator snapshot", { timeout: 30_000 }, () => {
  it("restoring midway (twice) and continuing emits byte-identical panes and late records", () => {
    const all = steps();
    const straight = collector();
    const a = createSessionOperator(config(), SESSIONS);
    feed(a, all, straight.out);
    a.finish(straight.out);
    expect(straight.lines.some((l) => l.includes('"kind":"retract"'))).toBe(true);
    expect(straight.lines.some((l) => l.includes('"reason":"behind-watermark"'))).toBe(true);

    const cut1 = Math.floor(all.length / 3);
    const cut2 = Math.floor((2 * all.length) / 3);
    const resumed = collector();
    let b = createSessionOperator(config(), SESSIONS);
    feed(b, all.slice(0, cut1), resumed.out);
    const snap1 = b.snapshot();
    b = restoreSessionOperator(config(), SESSIONS, snap1);
    expect(b.snapshot()).toEqual(snap1);
    feed(b, all.slice(cut1, cut2), resumed.out);
    b = restoreSessionOperator(config(), SESSIONS, b.snapshot());
    feed(b, all.slice(cut2), resumed.out);
    b.finish(resumed.out);
    expect(resumed.lines.length).toBe(straight.lines.length);
    expect(resumed.lines.join("\n")).toBe(straight.lines.join("\n"));
    expect(b.status()).toEqual(a.status());
  });

  it("refuses a corrupt, foreign or mismatched snapshot with a stable code", () => {
    const op = createSessionOperator(config(), SESSIONS);
    feed(op, steps().slice(0, 300), collector().out);
    const bytes = op.snapshot();
    const codeOf = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return e instanceof CoreError ? e.code : String(e);
      }
      return undefined;
    };
    const flipped = bytes.slice();
    flipped[40] = (flipped[40] as number) ^ 0xff;
    expect(codeOf(() => restoreSessionOperator(config(), SESSIONS, flipped))).toBe("TM_SNAPSHOT_CORRUPT");
    expect(codeOf(() => restoreSessionOperator(config(), SESSIONS, bytes.subarray(0, 5)))).toBe("TM_SNAPSHOT_CORRUPT");
    expect(codeOf(() => restoreSessionOperator(config(), { gap: "16s", maxLength: "2m" }, bytes))).toBe(
      "TM_SNAPSHOT_CONFIG_MISMATCH",
    );
    expect(codeOf(() => restoreSessionOperator(config(), SESSIONS, bytes))).toBeUndefined();
    // An older format (2: partitions without the log time of their last record), correctly sealed: refused.
    expect(bytes[4]).toBe(SESSION_SNAPSHOT_VERSION);
    const old = bytes.slice();
    old[4] = 2;
    new DataView(old.buffer).setUint32(old.length - 4, crc32(old.subarray(0, old.length - 4)), true);
    expect(codeOf(() => restoreSessionOperator(config(), SESSIONS, old))).toBe("TM_SNAPSHOT_VERSION");
  });
});
