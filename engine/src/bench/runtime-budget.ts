/**
 * The held-out targets' budget (runtime-held-out.ts; docs/decisions/0056-held-out-targets-on-two-cores.md):
 * the least work any engine design does on the held-out events, each part measured in the same run,
 * against the two throughput targets (engine ≥ 0.5× the core alone, ≥ 0.3× a bare read).
 *
 * Two bounds, as the floor's (runtime-floor.ts, docs/decisions/0028-runtime-targets-on-two-cores.md):
 * - **one core thread**: a worker's core runs on one thread, and it writes the pane bodies it emits
 *   (EmitGroups), so a run takes at least the core writing its bodies on the engine's own input (the
 *   decoded events), whatever the rest costs or wherever it runs;
 * - **every part spread perfectly** over the machine's cores (nats-server runs here too): the bare
 *   read's CPU (here and in nats-server), the core writing its bodies, and publishing them (here and
 *   in nats-server), over the cores. A core split across threads could at most reach this.
 * Neither counts the merge, timers, checkpoints or status: real runs are slower than both.
 */
import { availableParallelism } from "node:os";
import type { CoreConfig } from "../core/index.js";
import type { TelemetryEvent } from "../protocol.js";
import type { BareRead } from "./runtime-baselines.js";
import { coreFloor } from "./runtime-core-floor.js";
import { coreWritingBodies, publishAll } from "./runtime-floor.js";
import { row } from "./runtime-setup.js";

export interface HeldOutBudgetInput {
  url: string;
  serverPid: number;
  /** The events decoded from the published batches, in order: the engine's input. */
  decoded: readonly TelemetryEvent[];
  core: CoreConfig;
  endTs: number;
  /** Messages the engine's run published: the records are cut into as many bodies. */
  engineMessages: number;
  /** The core alone on simulate()'s objects, ms: the engine / core-alone ratio's baseline. */
  coreAloneMs: number;
  read: BareRead;
}

/** The targets, as rates against their baselines (> 1 is faster). */
export const HELD_OUT_TARGETS = { coreAlone: 0.5, bareRead: 0.3 };

const sec = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const x = (v: number): string => `${v.toFixed(2)}×`;

export async function heldOutBudgetRows(input: HeldOutBudgetInput): Promise<string[]> {
  // Timed without keeping the bodies (an engine publishes from the buffer), the fastest of two: the
  // first run compiles the body writers. The bodies to publish come from a third run that keeps them.
  const ms = Math.min(...[0, 1].map(() => coreWritingBodies({ ...input, events: input.decoded }, false).ms));
  const bodies = { ...coreWritingBodies({ ...input, events: input.decoded }), ms };
  // The publish is measured in this process, which holds the workload's events and batches: its
  // collector can double one publish's CPU, so the cheaper of two counts.
  const pubs = [await publishAll(input.url, input.serverPid, bodies.messages)];
  pubs.push(await publishAll(input.url, input.serverPid, bodies.messages));
  const pub = pubs.reduce((a, b) => (b.cpuMs + b.serverCpuMs < a.cpuMs + a.serverCpuMs ? b : a));
  const parts = coreFloor(input.decoded, input.core, input.endTs, Math.ceil(bodies.records / bodies.messages.length));
  const partsMs = parts.updatesMs + parts.encodeMs;
  const cores = availableParallelism();
  const { read } = input;
  const readCpu = read.cpuMs + read.serverCpuMs;
  const pubCpu = pub.cpuMs + pub.serverCpuMs;
  const least = readCpu + bodies.ms + pubCpu;
  const spread = least / cores;
  const bareBudget = read.ms / HELD_OUT_TARGETS.bareRead;
  const coreBudget = input.coreAloneMs / HELD_OUT_TARGETS.coreAlone;
  const verdict = (ms: number, budget: number): string =>
    ms <= budget ? "within it" : `over it by ${sec(ms - budget)}`;
  return [
    row("  budget: the least work any design does on these events (docs/decisions/0056)", "", ""),
    row(
      "    the core writing its pane and late bodies on the engine's input (one thread; EmitGroups, no NATS)",
      sec(bodies.ms),
      `${bodies.records.toLocaleString("en-US")} records in ${bodies.messages.length} bodies; publishing them (the cheaper of 2): CPU ${sec(pub.cpuMs)} here, ${sec(pub.serverCpuMs)} in nats-server`,
    ),
    row(
      "    of it, measured apart: the sketches' updates alone + the records' binary encoding alone (CPU)",
      sec(partsMs),
      `${sec(parts.updatesMs)} (${parts.perEvent} aggregates an event, found beforehand) + ${sec(parts.encodeMs)} (${parts.records.toLocaleString("en-US")} records); ${((100 * partsMs) / bareBudget).toFixed(0)} % of the bare-read target's budget below`,
    ),
    row(
      `    least CPU: bare read (here + nats-server) + core writing bodies + publish (here + nats-server)`,
      sec(least),
      `${sec(readCpu)} + ${sec(bodies.ms)} + ${sec(pubCpu)}; at least ${sec(spread)} of wall time on ${cores} cores`,
    ),
    row(
      `    target engine / bare read ≥ ${HELD_OUT_TARGETS.bareRead}×: the engine within bare read / ${HELD_OUT_TARGETS.bareRead}`,
      sec(bareBudget),
      `one core thread: ${verdict(bodies.ms, bareBudget)} (at best ${x(read.ms / bodies.ms)}); every part spread perfectly: ${verdict(spread, bareBudget)} (at best ${x(read.ms / spread)})`,
    ),
    row(
      `    target engine / core alone ≥ ${HELD_OUT_TARGETS.coreAlone}×: the engine within core alone / ${HELD_OUT_TARGETS.coreAlone}`,
      sec(coreBudget),
      `one core thread: ${verdict(bodies.ms, coreBudget)} (at best ${x(input.coreAloneMs / bodies.ms)}); every part spread perfectly: ${verdict(spread, coreBudget)}`,
    ),
  ];
}
