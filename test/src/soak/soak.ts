/**
 * `npm run bench -w test` (node dist/soak/soak.js): the whole default stack (`tidemark up --no-demo`:
 * ingest, one engine worker with sessions, the merge operator, the dashboard, nats-server) under
 * `tidemark load` in its own process, on this machine (docs/operations.md, "Capacity").
 *
 * 1. Soak: 10,000 events/s for TM_SOAK_MINUTES (default 10) from 100,000 users; each minute the
 *    engine's lag (its histogram over the minute, and tm.status' last-minute p50/p99) and every
 *    role's RSS; TM_PANES bytes per accepted event over the soak.
 *    Nothing lost: billing's final service panes (10 s) equal the accepted ledger.
 * 2. Sustained: the same at 20,000 events/s on a fresh stack, with each minute's checkpoints and the
 *    share of the minute they held the engine's input.
 * 3. Capacity: from 20,000 events/s up, 5,000 apart, each rate for 60 s on a fresh stack (a stack that
 *    just carried another load would be closing that load's sessions meanwhile); the highest rate whose
 *    events the engine handled with lag p99 ≤ 250 ms over the last 40 s (its histogram).
 * 4. Overload, on a fresh stack: that rate for 30 s, then 3× it for 30 s; the time until the engine's
 *    lag is back under 1 s; nothing accepted missing from billing's finals.
 * A full run (no TM_SOAK_PARTS, no TM_SOAK_MINUTES) is kept in engine/BENCHMARKS.md, "Soak".
 * Loopback only, bounded, stops by itself; it stops only what it started.
 */
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { billingFinals } from "./billing-finals.js";
import { recordSoak } from "./record.js";
import { addLedgers, runLoad, type Ledger, type LoadDone } from "./load-run.js";
import {
  checkpointHolds,
  lagBuckets,
  p99Bound,
  panesBytes,
  rssMb,
  shareWithin,
  startStack,
  workerStatus,
  type Stack,
} from "./stack.js";

const USERS = 100_000;
const SOAK_RATE = 10_000;
/** The sustained run's rate: the capacity claimed for the whole stack (docs/operations.md, "Capacity"). */
const SUSTAINED_RATE = 20_000;
const MINUTES = Number(process.env.TM_SOAK_MINUTES ?? 10);
/** Which parts run (comma list of soak, sustained, capacity, overload; default all). */
const PARTS = (process.env.TM_SOAK_PARTS ?? "soak,sustained,capacity,overload").split(",");
const BILLING_SETTLE_MS = 60_000 + 10_000 + 90_000 + 20_000;

const printed: string[] = [];
const log = (line: string): void => {
  printed.push(line);
  process.stdout.write(`${line}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mb = (x: number): string => `${Math.round(x)} MB`;

function rssLine(stack: Stack): string {
  return Object.entries(stack.pids)
    .map(([role, pid]) => `${role} ${mb(rssMb(pid))}`)
    .join(", ");
}

/** Waits until the engine worker's lag (wall − log time) is under `ms`; returns how long it took. */
async function recover(stack: Stack, ms: number, limitMs = 600_000): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs) {
    const s = workerStatus(stack);
    if (s !== undefined && s.wallTime > t0 && (s.pipelineLagMs ?? Infinity) < ms) return Date.now() - t0;
    await sleep(250);
  }
  throw new Error(`the engine's lag did not come back under ${ms} ms within ${limitMs} ms`);
}

async function soak(stack: Stack, dir: string, rate: number): Promise<{ done: LoadDone; ledger: Ledger }> {
  log(`soak: ${rate.toLocaleString("en-US")} events/s for ${MINUTES} min from ${USERS.toLocaleString("en-US")} users`);
  log(`  start RSS: ${rssLine(stack)}`);
  const bytes0 = await panesBytes(stack.nc);
  const run = runLoad(stack, dir, `soak-${rate}`, rate, MINUTES * 60, USERS);
  let before = await lagBuckets(stack);
  const peak: Record<string, number> = {};
  const sampler = setInterval(() => {
    for (const [role, pid] of Object.entries(stack.pids)) peak[role] = Math.max(peak[role] ?? 0, rssMb(pid));
  }, 1_000);
  log(
    "  | minute | events | lag p99 (histogram bound) | lag p50 / p99 (tm.status, last min) | checkpoints (input held) | engine RSS | merge RSS |",
  );
  let holds = await checkpointHolds(stack);
  for (let minute = 1; minute <= MINUTES; minute++) {
    await sleep(60_000);
    const after = await lagBuckets(stack);
    const s = workerStatus(stack);
    const { events } = shareWithin(before, after, "0.25");
    const nowHolds = await checkpointHolds(stack);
    const held = `${nowHolds.count - holds.count} (${(((nowHolds.heldS - holds.heldS) / 60) * 100).toFixed(2)} %)`;
    holds = nowHolds;
    log(
      `  | ${minute} | ${events.toLocaleString("en-US")} | ≤ ${p99Bound(before, after)} s | ${s?.pipelineLag?.p50 ?? "–"} / ${s?.pipelineLag?.p99 ?? "–"} ms | ${held} | ${mb(rssMb(stack.pids.engine ?? 0))} | ${mb(rssMb(stack.pids.merge ?? 0))} |`,
    );
    before = after;
  }
  const result = await run;
  clearInterval(sampler);
  log(
    `  end RSS: ${rssLine(stack)}; peak: ${Object.entries(peak)
      .map(([r, v]) => `${r} ${mb(v)}`)
      .join(", ")}`,
  );
  await recover(stack, 1_000);
  const bytes = (await panesBytes(stack.nc)) - bytes0;
  log(
    `  accepted ${result.done.accepted.toLocaleString("en-US")} (${result.done.acceptedPerSec}/s), 5xx ${result.done.http5xx}, POST p99 ${result.done.httpP99Ms} ms; TM_PANES ${(bytes / result.done.accepted).toFixed(1)} B per accepted event`,
  );
  return result;
}

/** One rate on a fresh stack: the engine's histogram over the last 40 s of 60 s (its first 20 s warm it up). */
async function step(dir: string, rate: number): Promise<{ share: number; bound: string; done: LoadDone }> {
  const stack = await startStack(join(dir, `data-${rate}`), dir);
  try {
    const run = runLoad(stack, dir, `step-${rate}`, rate, 60, USERS);
    await sleep(20_000);
    const before = await lagBuckets(stack);
    const { done } = await run;
    const after = await lagBuckets(stack);
    return { share: shareWithin(before, after, "0.25").share, bound: p99Bound(before, after), done };
  } finally {
    await stack.stop();
  }
}

async function capacity(dir: string): Promise<number> {
  log("capacity: each rate for 60 s on a fresh stack, the engine's histogram over its last 40 s");
  let best = 0;
  for (let rate = 20_000; rate <= 60_000; rate += 5_000) {
    const { share, bound, done } = await step(dir, rate);
    const held = share >= 0.99 && done.acceptedPerSec >= 0.95 * rate;
    log(
      `  ${rate.toLocaleString("en-US")}/s: accepted ${done.acceptedPerSec.toLocaleString("en-US")}/s, ${(100 * share).toFixed(2)} % of events within 250 ms (p99 ≤ ${bound} s), 5xx ${done.http5xx}, retries ${done.retries} — ${held ? "holds" : "does not hold"}`,
    );
    if (!held) break;
    best = rate;
  }
  log(`  highest rate with engine lag p99 ≤ 250 ms: ${best.toLocaleString("en-US")} events/s`);
  return best;
}

/** 3× capacity for 30 s after 30 s at capacity, on a fresh stack; then nothing accepted may be missing from billing. */
async function overload(dir: string, capacityRate: number): Promise<void> {
  const base = Math.max(capacityRate, SOAK_RATE);
  const rate = 3 * base;
  const stack = await startStack(join(dir, "data-overload"), dir);
  try {
    log(
      `overload: ${base.toLocaleString("en-US")} events/s for 30 s, then ${rate.toLocaleString("en-US")} events/s (3×) for 30 s`,
    );
    const ledgers: Ledger[] = [(await runLoad(stack, dir, "before-burst", base, 30, USERS)).ledger];
    const { done, ledger } = await runLoad(stack, dir, "burst", rate, 30, USERS);
    ledgers.push(ledger);
    const lagAtEnd = workerStatus(stack)?.pipelineLagMs ?? null;
    const took = await recover(stack, 1_000);
    log(
      `  burst accepted ${done.accepted.toLocaleString("en-US")} (${done.acceptedPerSec.toLocaleString("en-US")}/s), 5xx ${done.http5xx}, retries ${done.retries}, shed ${done.shed}; engine lag at its end ${lagAtEnd} ms, back under 1 s ${(took / 1000).toFixed(1)} s after it`,
    );
    await nothingLost(stack, ledgers);
  } finally {
    await stack.stop();
  }
}

/** Billing's final service panes (10 s) against the accepted ledgers, once billing has closed their windows. */
async function nothingLost(stack: Stack, ledgers: readonly Ledger[]): Promise<void> {
  log(`  waiting ${BILLING_SETTLE_MS / 1000} s for billing's finals`);
  await sleep(BILLING_SETTLE_MS);
  const want = addLedgers(ledgers);
  const got = await billingFinals(stack.nc, 10_000);
  let missing = 0;
  let wrong = 0;
  for (const [key, c] of want) {
    const g = got.get(key);
    if (g === undefined) missing++;
    else if (g.count !== c.count || g.errors !== c.errors) wrong++;
  }
  const total = [...want.values()].reduce((n, c) => n + c.count, 0);
  log(
    `  billing's final 10 s windows vs the accepted ledgers: ${want.size} windows, ${total.toLocaleString("en-US")} events; ${missing} missing, ${wrong} different`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-soak-"));
  log(
    `soak bench (load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")})`,
  );
  for (const rate of [SOAK_RATE, SUSTAINED_RATE]) {
    if (!PARTS.includes(rate === SOAK_RATE ? "soak" : "sustained")) continue;
    const stack = await startStack(join(dir, `data-soak-${rate}`), dir);
    try {
      const { ledger } = await soak(stack, dir, rate);
      await nothingLost(stack, [ledger]);
    } finally {
      await stack.stop();
    }
  }
  const best = PARTS.includes("capacity") ? await capacity(dir) : SUSTAINED_RATE;
  if (PARTS.includes("overload")) await overload(dir, best);
  log(
    `load average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  if (process.env.TM_SOAK_PARTS === undefined && process.env.TM_SOAK_MINUTES === undefined) recordSoak(printed);
}

void main().catch((err: unknown) => {
  process.stderr.write(`soak: ${String(err)}\n`);
  process.exitCode = 1;
});
