/**
 * `node dist/bench/load-model.js` (`npm run bench -w deploy`): what `tidemark load`'s traffic model
 * costs beside what the sender does with every event anyway, so the model is never what holds a
 * load run under its --rate (docs/operations.md, "`tidemark load`").
 *
 * The model makes 10 s of traffic at 30,000 events/s (20,000 users, 24 services × 5 routes), asked
 * every 50 ms as the sender's ticks ask it; the baseline, in the same run, writes each of those
 * events as its NDJSON line (`makeBatch`: one `JSON.stringify` an event, what every batch sent
 * does). Best of 5 each, alternating. Printed: events per second of each, the model's time as a
 * multiple of the baseline's, and its rate against the 30,000 events/s asked.
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { makeBatch } from "../load/batch.js";
import { LoadModel } from "../load/model.js";
import type { PlannedEvent } from "../demo/model.js";

const T0 = 1_800_000_000_000;
const RATE = 30_000;
const SECONDS = 10;
const RUNS = 5;

function generate(): PlannedEvent[] {
  const model = new LoadModel({ seed: 1, startMs: T0, rate: RATE, users: 20_000, services: 24, routes: 5 });
  const out: PlannedEvent[] = [];
  for (let t = 50; t <= SECONDS * 1000; t += 50) for (const p of model.generate(T0 + t)) out.push(p);
  return out;
}

function timed<T>(fn: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = fn();
  return { ms: performance.now() - t0, value };
}

function main(): void {
  let modelMs = Infinity;
  let linesMs = Infinity;
  let events = 0;
  for (let k = 0; k < RUNS; k++) {
    const g = timed(generate);
    modelMs = Math.min(modelMs, g.ms);
    events = g.value.length;
    const l = timed(() => makeBatch("bench", g.value));
    linesMs = Math.min(linesMs, l.ms);
  }
  const rate = (ms: number): string => Math.round(events / (ms / 1000)).toLocaleString("en-US");
  const row = (what: string, value: string, note: string): string =>
    `  ${what.padEnd(78)} ${value.padStart(14)}  ${note}`;
  console.log(
    [
      `load model (${events.toLocaleString("en-US")} events: ${SECONDS} s at ${RATE.toLocaleString("en-US")}/s, ticks of 50 ms), best of ${RUNS}`,
      row("the model: LoadModel.generate", `${modelMs.toFixed(0)} ms`, `${rate(modelMs)} events/s`),
      row("baseline: each event's NDJSON line (makeBatch)", `${linesMs.toFixed(0)} ms`, `${rate(linesMs)} events/s`),
      row(
        "model / baseline, time",
        `${(modelMs / linesMs).toFixed(2)}×`,
        "what the model adds to the work every sent event costs",
      ),
      row(
        `model's rate / the ${RATE.toLocaleString("en-US")} events/s asked`,
        `${(events / (modelMs / 1000) / RATE).toFixed(1)}×`,
        "headroom of one core",
      ),
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    ].join("\n"),
  );
}

main();
