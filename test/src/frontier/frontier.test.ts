import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli-run.js";

// ---------------------------------------------------------------------------------------------
/**
 * An independent reference for `tidemark frontier --json`: the seed's Block 4 loop, brute force,
 * sharing no code with the core. For each record in arrival order: W = ingest_ts − lag; a record
 * whose window [s, e) has e + grace <= W is dropped; otherwise it is added, and every window with
 * e + grace <= W that has not fired yet fires with what it holds. At the end every open window is
 * finalized with what it holds. Truth counts every record.
 */
interface Row {
  ts: number;
  ingest_ts: number;
  service: string;
  status: number;
}

interface Cell {
  count: number;
  errors: number;
}

function readRows(ndjson: string): Row[] {
  return ndjson
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row)
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.ingest_ts - b.r.ingest_ts || a.i - b.i)
    .map((x) => x.r);
}

function block4(rows: readonly Row[], lag: number, w: number, allowed: number) {
  const acc = new Map<string, Cell & { win: number }>();
  const fired = new Map<string, Cell>();
  let dropped = 0;
  for (const r of rows) {
    const wm = r.ingest_ts - lag;
    const win = Math.floor(r.ts / w);
    if ((win + 1) * w <= wm - allowed) {
      dropped++;
      continue;
    }
    const k = `${win}/${r.service}`;
    const cell = acc.get(k) ?? { count: 0, errors: 0, win };
    cell.count++;
    if (r.status >= 500) cell.errors++;
    acc.set(k, cell);
    for (const [kk, c] of acc) {
      if ((c.win + 1) * w <= wm - allowed && !fired.has(kk)) fired.set(kk, { count: c.count, errors: c.errors });
    }
  }
  for (const [kk, c] of acc) if (!fired.has(kk)) fired.set(kk, { count: c.count, errors: c.errors });
  return { fired, dropped };
}

function referenceFrontier(rows: readonly Row[], windowMs: number, policies: readonly [number, number][]) {
  const truth = new Map<string, Cell>();
  for (const r of rows) {
    const k = `${Math.floor(r.ts / windowMs)}/${r.service}`;
    const t = truth.get(k) ?? { count: 0, errors: 0 };
    t.count++;
    if (r.status >= 500) t.errors++;
    truth.set(k, t);
  }
  return {
    events: rows.length,
    windows: truth.size,
    policies: policies.map(([lag, grace]) => {
      const { fired, dropped } = block4(rows, lag, windowMs, grace);
      let wrong = 0;
      let lost = 0;
      let maxError = 0;
      const biases: number[] = [];
      for (const [k, t] of truth) {
        const got = fired.get(k) ?? { count: 0, errors: 0 };
        if (got.count !== t.count) wrong++;
        lost += t.count - got.count;
        maxError = Math.max(maxError, t.count - got.count);
        if (got.count > 0) biases.push(100 * (got.errors / got.count - t.errors / t.count));
      }
      const bias = biases.length === 0 ? null : biases.reduce((a, b) => a + b, 0) / biases.length;
      return {
        lag_ms: lag,
        grace_ms: grace,
        emit_delay_ms: lag + grace,
        dropped,
        wrong_windows: wrong,
        lost,
        max_error: maxError,
        accuracy_pct: Math.round(100 * (1 - lost / rows.length) * 1e4) / 1e4,
        error_rate_bias_pp: bias === null ? null : Math.round(bias * 1e6) / 1e6,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------

const S = 1000;
let dir: string;
const path = (name: string): string => join(dir, name);

async function simulate(name: string, args: string[]): Promise<string> {
  const r = await runCli(["simulate", ...args]);
  expect(r.code).toBe(0);
  writeFileSync(path(name), r.stdout);
  return r.stdout;
}

async function frontierJson(file: string, window: string, policies: readonly [number, number][]) {
  const r = await runCli([
    "frontier",
    "--input",
    file,
    "--window",
    window,
    ...policies.flatMap(([l, g]) => ["--policy", `${l}ms+${g}ms`]),
    "--json",
  ]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as ReturnType<typeof referenceFrontier>;
}

const SEED_SWEEP: [number, number][] = [
  [2 * S, 0],
  [10 * S, 0],
  [30 * S, 0],
  [90 * S, 0],
  [10 * S, 30 * S],
  [10 * S, 90 * S],
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tm-frontier-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("tidemark frontier: golden experiment on simulate --seed 1", () => {
  let seed1: string;
  beforeAll(async () => {
    seed1 = await simulate("seed1.ndjson", ["--seed", "1"]);
  });

  it("agrees exactly with the independent Block 4 reference, and has the seed's shape", async () => {
    const got = await frontierJson(path("seed1.ndjson"), "60s", SEED_SWEEP);
    const want = referenceFrontier(readRows(seed1), 60 * S, SEED_SWEEP);
    expect(got).toEqual(want);
    expect(Object.keys(got)).toEqual(["events", "windows", "policies"]);
    expect(Object.keys(got.policies[0] ?? {})).toEqual([
      "lag_ms",
      "grace_ms",
      "emit_delay_ms",
      "dropped",
      "wrong_windows",
      "lost",
      "max_error",
      "accuracy_pct",
      "error_rate_bias_pp",
    ]);
    expect([got.events, got.windows]).toEqual([20_000, 40]);
    const [l2, l10, l30, l90, g30, g90] = got.policies;
    // lag 90 s and 10 s + 90 s grace are exact; 10 s + 30 s is not.
    expect([l90?.wrong_windows, l90?.lost, g90?.wrong_windows, g90?.lost]).toEqual([0, 0, 0, 0]);
    expect(g30?.wrong_windows).toBeGreaterThan(0);
    // lost equals dropped: nothing vanishes silently.
    for (const p of got.policies) expect(p.lost).toBe(p.dropped);
    // loss falls monotonically as the lag grows.
    const losses = [l2, l10, l30, l90].map((p) => p?.lost as number);
    for (let i = 1; i < losses.length; i++) expect(losses[i]).toBeLessThan(losses[i - 1] as number);
    expect(losses[0]).toBeGreaterThan(1000);
  });

  it("prints the assembly's three policies in the seed's table shape", async () => {
    const r = await runCli([
      "frontier",
      "--input",
      path("seed1.ndjson"),
      "--policy",
      "dashboard",
      "--policy",
      "alerting",
      "--policy",
      "billing",
    ]);
    expect(r.code).toBe(0);
    const ref = referenceFrontier(readRows(seed1), 60 * S, [
      [2 * S, 0],
      [10 * S, 30 * S],
      [10 * S, 90 * S],
    ]).policies;
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(
      /policy\s+lag\s+grace\s+emit delay\s+windows wrong\s+events lost\s+max error\s+accuracy\s+error-rate bias/,
    );
    const row = (name: string, lag: string, grace: string, delay: string, p: (typeof ref)[number] | undefined) =>
      new RegExp(
        `^\\s+${name}\\s+${lag}\\s+${grace}\\s+${delay}\\s+${p?.wrong_windows}\\s+${p?.lost}\\s+${p?.max_error}\\s+${p?.accuracy_pct.toFixed(2)}%`,
      );
    expect(lines[2]).toMatch(row("dashboard", "2s", "0s", "2s", ref[0]));
    expect(lines[3]).toMatch(row("alerting", "10s", "30s", "40s", ref[1]));
    expect(lines[4]).toMatch(row("billing", "10s", "90s", "100s", ref[2]));
    expect(lines[4]).toMatch(/\s0\s+0\s+0\s+100\.00%/);
  });
});

describe("tidemark frontier agrees with the reference on other recordings", () => {
  it("30 s windows, 12 services, lateness correlated with errors", async () => {
    const text = await simulate("corr.ndjson", [
      "--seed",
      "2",
      "--events",
      "15000",
      "--services",
      "12",
      "--corr",
      "0.4",
    ]);
    const policies: [number, number][] = [
      [5 * S, 0],
      [1 * S, 10 * S],
      [20 * S, 20 * S],
      [45 * S, 5 * S],
    ];
    const got = await frontierJson(path("corr.ndjson"), "30s", policies);
    expect(got).toEqual(referenceFrontier(readRows(text), 30 * S, policies));
    // lateness correlated with failure: the fast policy under-reports errors.
    expect(got.policies[0]?.error_rate_bias_pp).toBeLessThan(-1);
  });

  it("a heavier tail, 10 s windows, 7 services", async () => {
    const text = await simulate("tail.ndjson", [
      "--seed",
      "3",
      "--events",
      "8000",
      "--services",
      "7",
      "--tail",
      "0.3",
      "--mean-delay",
      "5s",
      "--span",
      "300s",
    ]);
    const policies: [number, number][] = [
      [0, 0],
      [3 * S, 2 * S],
      [15 * S, 0],
      [60 * S, 60 * S],
    ];
    expect(await frontierJson(path("tail.ndjson"), "10s", policies)).toEqual(
      referenceFrontier(readRows(text), 10 * S, policies),
    );
  });

  it("records exactly on window and watermark boundaries", async () => {
    const W = 10 * S;
    const lag = 2 * S;
    const grace = 3 * S;
    const T = 1_767_225_600_000;
    const rows: Row[] = [];
    const add = (ts: number, ingest: number, service = "a", status = 200) =>
      rows.push({ ts, ingest_ts: ingest, service, status });
    for (let k = 0; k < 6; k++) {
      const s = T + k * W;
      const e = s + W;
      add(s, s + 10); // first ms of the window
      add(e - 1, e - 1 + 10, "b"); // last ms of the window
      add(s + 1, e + lag - 1, "a", 500); // W = e − 1: on time
      add(s + 2, e + lag, "b"); // W = e: late, within grace
      add(s + 3, e + lag + grace - 1, "a", 503); // W = e + grace − 1: last accepted
      add(s + 4, e + lag + grace, "b", 500); // W = e + grace: dropped
      add(e, e + lag + grace, "a"); // first ms of the next window at the same instant
    }
    rows.sort((a, b) => a.ingest_ts - b.ingest_ts);
    const text = rows.map((r) => JSON.stringify({ ...r, route: "/x", latency_ms: 1, user: "u" })).join("\n") + "\n";
    writeFileSync(path("edges.ndjson"), text);
    const policies: [number, number][] = [
      [lag, grace],
      [lag, 0],
      [0, 0],
      [lag, grace + 1],
    ];
    const got = await frontierJson(path("edges.ndjson"), "10s", policies);
    expect(got).toEqual(referenceFrontier(rows, W, policies));
    expect(got.policies[0]?.dropped).toBe(6);
  });
});

describe("tidemark frontier options", () => {
  it("accepts a policy named in --config, and draws a progress bar on stderr with --progress", async () => {
    const text = await simulate("named.ndjson", ["--seed", "6", "--events", "4000"]);
    writeFileSync(
      path("tidemark.config.json"),
      JSON.stringify({
        policies: [
          {
            name: "fast",
            watermark: { kind: "arrival-lag", lag: "5s" },
            grace: "15s",
            mode: "accumulating",
            earlyEvery: "1s",
          },
        ],
      }),
    );
    const r = await runCli([
      "frontier",
      "--input",
      path("named.ndjson"),
      "--config",
      path("tidemark.config.json"),
      "--policy",
      "fast",
      "--json",
      "--progress",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(referenceFrontier(readRows(text), 60 * S, [[5 * S, 15 * S]]));
    expect(r.stderr).toMatch(/frontier \[#{40}\] 100% 4000\/4000\n$/);
  });
});

describe("tidemark frontier: perfect watermark and arrival order", () => {
  it("perfect uses the recording's largest delay as lag and loses nothing", async () => {
    const text = await simulate("perfect.ndjson", ["--seed", "12", "--events", "5000"]);
    const rows = readRows(text);
    const maxDelay = Math.max(...rows.map((r) => r.ingest_ts - r.ts));
    const r = await runCli(["frontier", "--input", path("perfect.ndjson"), "--policy", "perfect", "--json"]);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout) as ReturnType<typeof referenceFrontier>;
    expect(got).toEqual(referenceFrontier(rows, 60 * S, [[maxDelay, 0]]));
    expect(got.policies[0]).toMatchObject({
      lag_ms: maxDelay,
      dropped: 0,
      lost: 0,
      wrong_windows: 0,
      accuracy_pct: 100,
    });
  });

  it("a recording out of ingest_ts order is replayed sorted, with a notice on stderr", async () => {
    const text = await simulate("ordered.ndjson", ["--seed", "13", "--events", "3000"]);
    const lines = text.trimEnd().split("\n");
    const shuffled = lines
      .map((l, i) => ({ l, k: (i * 7919) % lines.length }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.l);
    writeFileSync(path("shuffled.ndjson"), shuffled.join("\n") + "\n");
    const a = await runCli(["frontier", "--input", path("ordered.ndjson"), "--policy", "5s+5s", "--json"]);
    const b = await runCli(["frontier", "--input", path("shuffled.ndjson"), "--policy", "5s+5s", "--json"]);
    expect(b.code).toBe(0);
    expect(b.stderr).toContain("was not in ingest_ts order; replaying it sorted by ingest_ts");
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout));
  });
});

describe("bad input stops with the file, line and field named, exit code 2", () => {
  it("an unreadable file", async () => {
    const r = await runCli(["frontier", "--input", path("missing.ndjson")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(path("missing.ndjson"));
    expect(r.stderr).toMatch(/TM_RECORDING_UNREADABLE.*cannot read/);
  });

  it("a malformed line", async () => {
    writeFileSync(
      path("bad-json.ndjson"),
      '{"ts":1,"ingest_ts":2,"service":"a","route":"/","status":200,"latency_ms":1,"user":"u"}\n\n{"ts":3,\n',
    );
    const r = await runCli(["frontier", "--input", path("bad-json.ndjson")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path("bad-json.ndjson")}:3: is not valid JSON`);
  });

  it("a missing or mistyped field", async () => {
    writeFileSync(
      path("no-ingest.ndjson"),
      '{"ts":1,"ingest_ts":2,"service":"a","status":200,"latency_ms":1}\n{"ts":1,"service":"a","status":200,"latency_ms":1}\n',
    );
    let r = await runCli(["frontier", "--input", path("no-ingest.ndjson")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path("no-ingest.ndjson")}:2: field "ingest_ts" is missing`);
    writeFileSync(path("bad-status.ndjson"), '{"ts":1,"ingest_ts":2,"service":"a","status":"500","latency_ms":1}\n');
    r = await runCli(["frontier", "--input", path("bad-status.ndjson")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`:1: field "status" must be a number, got "500"`);
  });

  it("a bad --policy or --window", async () => {
    writeFileSync(path("ok.ndjson"), '{"ts":1,"ingest_ts":2,"service":"a","status":200,"latency_ms":1}\n');
    const r = await runCli(["frontier", "--input", path("ok.ndjson"), "--policy", "fast"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--policy "fast": write LAG\+GRACE .* dashboard, alerting, billing/);
    const w = await runCli(["frontier", "--input", path("ok.ndjson"), "--window", "soon"]);
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/TM_CLI_BAD_FLAG/);
  });
});

describe("tidemark simulate", () => {
  it("is deterministic for a seed and writes the recording format sorted by ingest_ts", async () => {
    const a = await runCli(["simulate", "--seed", "9", "--events", "3000"]);
    const b = await runCli(["simulate", "--seed", "9", "--events", "3000"]);
    const c = await runCli(["simulate", "--seed", "10", "--events", "3000"]);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).not.toBe(c.stdout);
    const lines = a.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3000);
    const rows = lines.map((l) => JSON.parse(l) as Record<string, number | string>);
    expect(Object.keys(rows[0] ?? {})).toEqual(["ts", "ingest_ts", "service", "route", "status", "latency_ms", "user"]);
    for (let i = 1; i < rows.length; i++)
      expect(rows[i]?.ingest_ts as number).toBeGreaterThanOrEqual(rows[i - 1]?.ingest_ts as number);
    expect(new Set(rows.map((r) => r.service))).toEqual(new Set(["a", "b", "c", "d"]));
  });

  it("has the seed's delay mixture, and --corr makes late events fail more often", async () => {
    const rowsOf = async (corr: string) =>
      (await runCli(["simulate", "--seed", "4", "--events", "40000", "--corr", corr])).stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Row);
    const plain = await rowsOf("0");
    const delays = plain.map((r) => r.ingest_ts - r.ts).sort((x, y) => x - y);
    const median = delays[Math.floor(delays.length / 2)] as number;
    expect(median).toBeGreaterThan(1000);
    expect(median).toBeLessThan(2000);
    expect(Math.max(...delays)).toBeLessThan(90_000);
    const late = (rows: Row[]) => rows.filter((r) => r.ingest_ts - r.ts > 20_000);
    expect(late(plain).length / plain.length).toBeGreaterThan(0.05);
    const errRate = (rows: Row[]) => rows.filter((r) => r.status >= 500).length / rows.length;
    expect(errRate(plain)).toBeGreaterThan(0.015);
    expect(errRate(plain)).toBeLessThan(0.025);
    const corr = await rowsOf("0.5");
    expect(errRate(late(corr))).toBeGreaterThan(0.4);
    expect(errRate(late(plain))).toBeLessThan(0.05);
  });

  it("rejects a bad flag with exit code 2", async () => {
    const r = await runCli(["simulate", "--tail", "2"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--tail must be a number from 0 to 1, got "2"/);
  });
});
