/**
 * A real Prometheus 2.42 (`prometheus` from PATH) as a remote-write receiver on a free loopback
 * port, with a temp TSDB that survives stop/start (docs/remote-write.md, "Tests").
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@tidemark/deploy";
import { waitFor } from "../index.js";

export interface TestPrometheus {
  /** http://127.0.0.1:port */
  readonly url: string;
  /** The remote-write endpoint. */
  readonly writeUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Raw samples of a selector over the last `range`, as `labels → [[ts ms, value]]`. */
  samples(selector: string, range?: string): Promise<Map<string, [number, number][]>>;
}

export async function startPrometheus(dir: string): Promise<TestPrometheus> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, "global:\n  scrape_interval: 1m\n");
  let child: ChildProcess | undefined;
  let log = "";
  const start = async (): Promise<void> => {
    child = spawn(
      "prometheus",
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--web.enable-remote-write-receiver",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    child.stderr?.on("data", (b: Buffer) => (log = (log + b.toString()).slice(-20_000)));
    await waitFor(
      async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200,
      30_000,
      `Prometheus ready on ${url}:\n${log}`,
    );
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await exited;
  };
  await start();
  return {
    url,
    writeUrl: `${url}/api/v1/write`,
    start,
    stop,
    async samples(selector, range = "2h") {
      const q = new URLSearchParams({ query: `${selector}[${range}]`, time: String(Date.now() / 1000) });
      const res = await fetch(`${url}/api/v1/query?${q.toString()}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: { metric: Record<string, string>; values: [number, string][] }[] };
      };
      if (body.status !== "success") throw new Error(`Prometheus query ${selector}: ${JSON.stringify(body)}`);
      const out = new Map<string, [number, number][]>();
      for (const r of body.data.result)
        out.set(
          labelsKey(r.metric),
          r.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]),
        );
      return out;
    },
  };
}

/** `{a="1",b="2"}` with the labels sorted by name. */
export function labelsKey(labels: Record<string, string>): string {
  const sorted = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${sorted.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`;
}
