/**
 * Pane intake benchmark (`npm run bench -w @tidemark/dashboard`): the server's cost of taking
 * TM_PANES bodies into the pane store, per pane, without NATS. 50,000 panes (16 services, three
 * routes each and the service, two policies) in binary bodies of 72, as engines cut and gzip them
 * (docs/decisions/0047-binary-panes.md). Compared in the same run with the path before Decision 3
 * of that ADR: `decodePaneBody` (binary → objects → JSON text) and the text parsed again.
 * "every pane sent" also writes each stored pane's JSON once, as if every pane went to a client.
 * Best of 5 alternating rounds, CPU of this thread and wall time. Prints µs per pane and ratios.
 */
import { loadavg } from "node:os";
import { PaneRecords, type Pane } from "@tidemark/engine/protocol";
import { compressPaneBody, decodePaneBody } from "@tidemark/engine/nats";
import { resolveConfig } from "../server/config.js";
import { dashboardMetrics } from "../server/metrics.js";
import { asPane, readPaneBody } from "../server/pane-body-read.js";
import { PaneIntake } from "../server/pane-intake.js";
import type { StoredPane } from "../server/pane-store.js";

const PANES = Number(process.env["BENCH_PANES"] ?? 50_000);
const PER_BODY = 72;
const ROUNDS = 5;
const SERVICES = 16;
const ROUTES = [undefined, "/checkout", "/cart", "/search"];
const POLICIES = ["dashboard", "billing"];
const KINDS = ["early", "on-time", "late", "final"] as const;

function pane(i: number): Pane {
  const service = `svc-${i % SERVICES}`;
  const route = ROUTES[Math.floor(i / SERVICES) % ROUTES.length];
  const policy = POLICIES[Math.floor(i / (SERVICES * ROUTES.length)) % POLICIES.length] as string;
  const start = 1_800_000_000_000 + Math.floor(i / (SERVICES * ROUTES.length * POLICIES.length)) * 10_000;
  const kind = KINDS[i % KINDS.length] as Pane["kind"];
  const count = 900 + ((i * 7) % 400);
  return {
    id: `${policy}|${service}${route ? `|${route}` : ""}|10000|${start}`,
    seq: i % 3,
    kind,
    policy,
    key: route ? { service, route } : { service },
    window: { start, end: start + 10_000 },
    value: {
      count,
      errors: i % 37,
      errorRate: (i % 37) / count,
      p50: 21.5 + (i % 11),
      p90: 88.2,
      p95: 130.9,
      p99: 412.7 + (i % 97) / 10,
      p999: 801.3,
      users: 311 + (i % 50),
    },
    watermark: start + 10_000,
    emittedAt: start + 12_000,
    emitDelayMs: 2000,
    pipelineLagMs: 41 + (i % 9),
    lateAccepted: i % 4,
    dropped: i % 2,
    bias: {
      countPct: -6.4,
      errorRatePp: 0.15,
      p99Pct: -8.2,
      usersPct: 3.1,
      windows: 30,
      stage: kind,
      scope: "service",
    },
  } as Pane;
}

function bodies(gzip: boolean): Uint8Array[] {
  const out: Uint8Array[] = [];
  const w = new PaneRecords();
  for (let i = 0; i < PANES; i++) {
    w.add(pane(i));
    if (w.lines === PER_BODY || i === PANES - 1) out.push(gzip ? compressPaneBody(w.take()) : w.take());
  }
  return out;
}

type Path = (bodies: readonly Uint8Array[], intake: PaneIntake) => void;

/** Before: every record stringified by the decoder, then parsed again (the parse and check the feed did). */
const before: Path = (bs, intake) => {
  for (const b of bs)
    for (const json of decodePaneBody(b)) {
      const p = asPane(JSON.parse(json));
      if (typeof p !== "string") intake.pane(p, json);
    }
};

/** Now: each record decoded once to the pane the store keeps; its JSON written only when asked for. */
const now: Path = (bs, intake) => {
  for (const b of bs) for (const p of readPaneBody(b).panes) intake.pane(p.pane, p.json);
};

interface Cost {
  cpuUs: number;
  wallUs: number;
}

function run(path: Path, bs: readonly Uint8Array[], sent: boolean, panes = PANES): Cost {
  const config = resolveConfig({ logLevel: "silent" });
  let stored = 0;
  const intake = new PaneIntake(config, dashboardMetrics(), (s: StoredPane) => {
    stored++;
    if (sent) void s.json;
  });
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  path(bs, intake);
  const wallUs = (performance.now() - t0) * 1000;
  const used = process.cpuUsage(cpu);
  if (stored !== panes) throw new Error(`stored ${stored} panes of ${panes}: the bench's panes must all be kept`);
  return { cpuUs: used.user + used.system, wallUs };
}

const rows: Array<[string, Path, boolean]> = [
  ["before: decodePaneBody → JSON text → JSON.parse", before, false],
  ["now: decoded once, no pane sent", now, false],
  ["now: decoded once, every pane sent (JSON once)", now, true],
];

function measure(gzip: boolean): void {
  const bs = bodies(gzip);
  const best = rows.map(() => ({ cpuUs: Infinity, wallUs: Infinity }));
  run(before, bs.slice(0, 50), false, 50 * PER_BODY);
  run(now, bs.slice(0, 50), true, 50 * PER_BODY);
  for (let r = 0; r < ROUNDS; r++)
    rows.forEach(([, path, sent], i) => {
      const c = run(path, bs, sent);
      const b = best[i] as Cost;
      best[i] = { cpuUs: Math.min(b.cpuUs, c.cpuUs), wallUs: Math.min(b.wallUs, c.wallUs) };
    });
  const base = best[0] as Cost;
  console.log(`  ${bs.length} binary bodies of ${PER_BODY}${gzip ? ", gzip level 1 (the engine's default)" : ""}:`);
  rows.forEach(([name], i) => {
    const c = best[i] as Cost;
    const cpu = (c.cpuUs / PANES).toFixed(2);
    const wall = (c.wallUs / PANES).toFixed(2);
    const ratio = i === 0 ? "" : `  ${(c.cpuUs / base.cpuUs).toFixed(2)}× before's CPU`;
    console.log(`    ${name.padEnd(48)} ${cpu} µs CPU/pane, ${wall} µs wall/pane${ratio}`);
  });
}

console.log(
  `pane intake: ${PANES.toLocaleString("en-US")} panes into the pane store, best of ${ROUNDS} (load ${loadavg()[0]?.toFixed(1)}):`,
);
measure(true);
measure(false);
