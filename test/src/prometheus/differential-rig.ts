/**
 * The differential test's two servers over the same samples: tidemark (nats-server, `tidemark
 * engine` with two final-only policies, `tidemark dashboard --token`, fed by `tidemark backfill`)
 * and a real Prometheus 2.42 started over TSDB blocks that `promtool tsdb create-blocks-from
 * openmetrics` built from every sample tidemark serves, read through tidemark's own API.
 * Final-only policies make every sample's `pane_kind` "final", so a series is one series in both.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { spawnTidemark, startTestNats, waitFor, type CliProcess } from "../index.js";
import {
  connectNats,
  makeRecording,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { promApi, TOKEN } from "./prom-rig.js";

/** One series as tidemark serves it: labels (with `__name__`) and its samples, ms and value. */
export interface ExportedSeries {
  labels: Record<string, string>;
  points: Array<[number, number]>;
}

export interface DifferentialRig {
  /** tidemark's dashboard, http://127.0.0.1:port */
  readonly tidemark: string;
  /** Prometheus, http://127.0.0.1:port */
  readonly prometheus: string;
  readonly series: readonly ExportedSeries[];
  /** The first and last sample time, ms. */
  readonly firstMs: number;
  readonly lastMs: number;
  stop(): Promise<void>;
}

/** Two final-only policies (so every sample is final), 10 s and 60 s windows. */
const ENGINE_CONFIG = {
  windows: ["10s", "60s"],
  referenceHorizon: "1m",
  policies: [
    { name: "exact", watermark: { kind: "arrival-lag", lag: "2s" }, grace: "20s", mode: "final-only" },
    { name: "quick", watermark: { kind: "arrival-lag", lag: "1s" }, grace: 0, mode: "final-only" },
  ],
};

export async function startDifferentialRig(): Promise<DifferentialRig> {
  const nats = await startTestNats();
  const nc = await connectNats(nats.url);
  const dir = tempDir("differential");
  const configFile = join(dir, "tidemark.config.json");
  writeFileSync(configFile, JSON.stringify(ENGINE_CONFIG));
  const events = makeRecording({ events: 16_000, seed: 32, startMs: Date.now() - 8 * 60_000 });
  const engine: CliProcess = startEngine(nats.url, join(dir, "data"), ["--config", configFile, "--idle-timeout", "1h"]);
  const dash: CliProcess = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url, "--token", TOKEN]);
  let prom: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom?.once("exit", r));
      prom.kill("SIGTERM");
      await exited;
    }
    for (const p of [dash, engine]) await stopGracefully(p);
    await nc.close();
    await nats.stop();
  };
  try {
    await engine.ready;
    const tidemark = (await dash.ready)["dashboard"] as string;
    const summary = await runBackfill(nats.url, writeRecording(dir, events));
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
    const series = await settledExport(tidemark);
    const times = series.flatMap((s) => s.points.map(([t]) => t));
    const firstMs = Math.min(...times);
    const lastMs = Math.max(...times);
    const blocks = join(dir, "tsdb");
    await buildBlocks(series, join(dir, "samples.om"), blocks);
    const started = await startPrometheus(dir, blocks);
    prom = started.child;
    return { tidemark, prometheus: started.url, series, firstMs, lastMs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Every tidemark_* series with its raw samples, read until two reads a moment apart agree. */
async function settledExport(url: string): Promise<ExportedSeries[]> {
  let last = "";
  let out: ExportedSeries[] = [];
  await waitFor(
    async () => {
      out = await exportSamples(url);
      const now = JSON.stringify(out);
      const same = now === last && out.length > 0;
      last = now;
      return same;
    },
    30_000,
    "tidemark's samples to settle",
    500,
  );
  return out;
}

async function exportSamples(url: string): Promise<ExportedSeries[]> {
  const kinds = await promApi(url, "/api/v1/query", { query: 'count({__name__=~"tidemark_.+", pane_kind!="final"})' });
  const counted = (kinds.body["data"] as { result: unknown[] }).result;
  if (counted.length > 0) throw new Error(`samples that are not final: ${JSON.stringify(counted)}`);
  const res = await promApi(url, "/api/v1/query", {
    query: '{__name__=~"tidemark_.+"}[1h]',
    time: String(Date.now() / 1000),
  });
  if (res.status !== 200) throw new Error(`tidemark's export answered ${res.status}: ${JSON.stringify(res.body)}`);
  const result = (res.body["data"] as { result: Array<{ metric: Record<string, string>; values: [number, string][] }> })
    .result;
  return result.map((s) => ({
    labels: s.metric,
    points: s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)] as [number, number]),
  }));
}

/** The samples as an OpenMetrics text (families together, series in time order), then TSDB blocks. */
async function buildBlocks(series: readonly ExportedSeries[], file: string, out: string): Promise<void> {
  const byName = new Map<string, ExportedSeries[]>();
  for (const s of series) {
    const name = s.labels["__name__"] as string;
    byName.set(name, [...(byName.get(name) ?? []), s]);
  }
  const lines: string[] = [];
  for (const [name, list] of byName) {
    lines.push(`# TYPE ${name} gauge`);
    for (const s of list) {
      const labels = Object.entries(s.labels)
        .filter(([n]) => n !== "__name__")
        .map(([n, v]) => `${n}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",");
      for (const [t, v] of s.points) lines.push(`${name}{${labels}} ${String(v)} ${(t / 1000).toFixed(3)}`);
    }
  }
  lines.push("# EOF");
  writeFileSync(file, lines.join("\n") + "\n");
  await run("promtool", ["tsdb", "create-blocks-from", "openmetrics", file, out]);
}

function run(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")}: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** `prometheus` (from PATH) over the blocks, on a free loopback port; resolves once /-/ready answers 200. */
async function startPrometheus(dir: string, blocks: string): Promise<{ child: ChildProcess; url: string }> {
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, "global:\n  evaluation_interval: 1m\n");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    "prometheus",
    [
      `--storage.tsdb.path=${blocks}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--config.file=${config}`,
      "--storage.tsdb.retention.time=30d",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr?.on("data", (b: Buffer) => (log = (log + b.toString()).slice(-4000)));
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}:\n${log}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
      },
      30_000,
      "prometheus /-/ready",
    );
  } catch (err) {
    child.kill("SIGTERM");
    throw err;
  }
  return { child, url };
}
