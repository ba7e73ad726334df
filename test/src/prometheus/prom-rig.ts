/**
 * The Prometheus API's real-component rig: nats-server, `tidemark engine`, `tidemark merge` (the
 * all-services panes), `tidemark dashboard --token`, fed by `tidemark backfill` of a seeded
 * recording long enough (8 min) for panes to carry a measured bias; plus promtool (from PATH) and
 * /api/panes helpers.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { ALL_SERVICES, type Pane, type TelemetryEvent } from "@tidemark/engine/protocol";
import { spawnTidemark, startTestNats, waitFor, type CliProcess, type TestNats } from "../index.js";
import {
  connectNats,
  dedupePanes,
  lastPanes,
  metricValue,
  makeRecording,
  readStream,
  runBackfill,
  startEngine,
  stopGracefully,
  tempDir,
  waitForStatus,
  writeRecording,
} from "../engine/engine-fixtures.js";
import { startMerge, waitForMergeEnd } from "../merge/merge-fixtures.js";

export const TOKEN = "prom-read-token";
/** Resolved from PATH (the Debian package "prometheus" installs it). */
export const PROMTOOL = "promtool";

export interface PromRig {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** The URL promtool 2.42 is given: basic auth with the read token as password. */
  readonly promtoolUrl: string;
  /** Every pane the engine and the merge operator wrote (TM_PANES), the newest non-retract (id, seq) per id. */
  readonly panes: readonly Pane[];
  /** The recording backfilled: the raw events, the truth the counts are checked against. */
  readonly events: readonly TelemetryEvent[];
  stop(): Promise<void>;
}

export async function startPromRig(): Promise<PromRig> {
  const nats: TestNats = await startTestNats();
  const nc: NatsConnection = await connectNats(nats.url);
  const dir = tempDir("prometheus");
  // About eight minutes of traffic ending about now: promtool's label and series queries default to
  // the year around now.
  const events = makeRecording({ events: 24_000, seed: 5, startMs: Date.now() - 10 * 60_000 });
  const engine: CliProcess = startEngine(nats.url, join(dir, "data"), ["--idle-timeout", "1h"]);
  const merge: CliProcess = startMerge(nats.url, join(dir, "merge"), ["--idle-timeout", "1h"]);
  const dash: CliProcess = spawnTidemark(["dashboard", "--port", "0", "--nats", nats.url, "--token", TOKEN]);
  const stop = async (): Promise<void> => {
    for (const p of [dash, merge, engine]) await stopGracefully(p);
    await nc.close();
    await nats.stop();
  };
  try {
    await Promise.all([engine.ready, merge.ready]);
    const url = (await dash.ready)["dashboard"] as string;
    const summary = await runBackfill(nats.url, writeRecording(dir, events));
    await waitForStatus(nc, (s) => (s.logTime ?? 0) >= summary.endOfRecordingTs, 60_000, "end of recording");
    await waitForMergeEnd(nc, summary.endOfRecordingTs);
    const raw = await readStream(nc, "TM_PANES");
    const panes = [...lastPanes(dedupePanes(raw).values()).values()];
    // The dashboard took in (stored or, as an older seq, ignored) every pane line the stream held (its
    // feed starts at the stream's first message): what promtool reads is all of it, whichever came last.
    await waitFor(
      async () => {
        const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
        const seen = ["applied", "ignored"].map((k) => metricValue(text, `tidemark_dashboard_panes_${k}_total`) ?? 0);
        return seen[0]! + seen[1]! >= raw.length;
      },
      30_000,
      `the dashboard to apply all ${raw.length} pane lines`,
    );
    // The newest pane of the workers and of the merge operator, each held by the dashboard.
    const newestOf = (xs: Pane[]): Pane => xs.reduce((a, b) => (b.emittedAt > a.emittedAt ? b : a));
    const star = panes.filter((p) => p.key.service === ALL_SERVICES);
    if (star.length === 0) throw new Error("the merge operator wrote no all-services pane");
    for (const newest of [newestOf(panes.filter((p) => p.key.service !== ALL_SERVICES)), newestOf(star)])
      await waitFor(
        async () =>
          (await panesOf(url, newest.policy, newest.window.end - newest.window.start, newest.key.service)).some(
            (p) => p.id === newest.id && p.seq === newest.seq,
          ),
        20_000,
        `the dashboard to hold ${newest.id}#${newest.seq}`,
      );
    const promtoolUrl = url.replace("http://", `http://tidemark:${TOKEN}@`);
    return { url, promtoolUrl, panes, events, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `/api/panes` of one policy, window size and service (service-level panes; "*": all services), with the read token. */
export async function panesOf(url: string, policy: string, windowMs: number, service: string): Promise<Pane[]> {
  const res = await fetch(
    `${url}/api/panes?policy=${policy}&window=${windowMs / 1000}s&service=${encodeURIComponent(service)}`,
    {
      headers: { authorization: `Bearer ${TOKEN}` },
    },
  );
  if (res.status !== 200) throw new Error(`/api/panes answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { panes: Pane[] }).panes;
}

export interface PromtoolRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `promtool query …` and returns its exit code and output. */
export function promtool(args: readonly string[]): Promise<PromtoolRun> {
  return new Promise((resolve) => {
    execFile(PROMTOOL, ["query", ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** promtool's `-o json` output, parsed; throws with its stderr when it failed. */
export async function promtoolJson<T>(args: readonly string[]): Promise<T> {
  const run = await promtool(["-o", "json", ...args]);
  if (run.code !== 0) throw new Error(`promtool query ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

/** A GET or form POST to the Prometheus API with the read token as a bearer header (as Grafana sends it). */
export async function promApi(
  url: string,
  path: string,
  params: Record<string, string | string[]>,
  method: "GET" | "POST" = "GET",
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  const init: RequestInit =
    method === "POST"
      ? { method, headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, body: form.toString() }
      : { method, headers };
  const res = await fetch(`${url}${path}${method === "GET" ? `?${form.toString()}` : ""}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
