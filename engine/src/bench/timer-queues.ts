/**
 * The session operator's timer queue (docs/decisions/0053-session-timer-calendar.md) against the
 * binary heap it replaced, in the same process (part of `node dist/bench/sessions.js`): the arming
 * of a run where every event opens a session of its own, as on the held-out workload. Each row is
 * armed as it is placed (in arrival order, due = its event time + gap + the first policy's lag);
 * once log time passes them all, every pop re-arms the row's next transition until its five are
 * done (the policies' ends and closes). Least CPU of ROUNDS, the two queues alternating.
 */
import { simulate } from "../core/index.js";
import { DueCalendar } from "../core/session/due-calendar.js";
import { DueHeap } from "../core/session/due-heap.js";
import { HELD_OUT } from "./runtime-held-out.js";

const ROUNDS = 5;
const GAP_MS = 60_000;
/** After the session's end: dashboard's end and close, alerting's and billing's ends, their closes. */
const OFFSETS = [2_000, 10_000, 40_000, 100_000, 300_000];

interface Queue {
  push(due: number, id: number): void;
  peekDue(): number;
  peekId(): number;
  pop(): void;
}

function drive(q: Queue, ends: Float64Array): number {
  const step = new Uint8Array(ends.length);
  for (let id = 0; id < ends.length; id++) q.push((ends[id] as number) + (OFFSETS[0] as number), id);
  let fired = 0;
  for (let due = q.peekDue(); due < Infinity; due = q.peekDue()) {
    const id = q.peekId();
    q.pop();
    fired++;
    const next = (step[id] as number) + 1;
    step[id] = next;
    if (next < OFFSETS.length) q.push((ends[id] as number) + (OFFSETS[next] as number), id);
  }
  return fired;
}

function cpuMs(run: () => void): number {
  const c0 = process.cpuUsage();
  run();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** One printed line: both queues' least CPU on the same arming, and their ratio. */
export function timerQueueRow(): string {
  const events = simulate(HELD_OUT);
  events.sort((a, b) => a.ingest_ts - b.ingest_ts);
  const ends = Float64Array.from(events, (e) => e.ts + GAP_MS);
  const best = { heap: Infinity, calendar: Infinity };
  let fired = 0;
  for (let r = 0; r < ROUNDS; r++) {
    best.heap = Math.min(
      best.heap,
      cpuMs(() => void (fired = drive(new DueHeap(), ends))),
    );
    best.calendar = Math.min(
      best.calendar,
      cpuMs(() => void drive(new DueCalendar(), ends)),
    );
  }
  return (
    `session timers, ${ends.length.toLocaleString("en-US")} one-event sessions, ${fired.toLocaleString("en-US")} timers fired: ` +
    `calendar queue ${best.calendar.toFixed(1)} ms, one binary heap ${best.heap.toFixed(1)} ms ` +
    `(calendar / heap ${(best.calendar / best.heap).toFixed(2)}x CPU; least of ${ROUNDS}, alternating)`
  );
}
