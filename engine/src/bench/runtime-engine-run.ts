/**
 * One in-process engine run of the runtime benchmark (runtime.ts, runtime-held-out.ts): from an
 * empty checkpoint dir until every event is through the core and every pane is acknowledged.
 * TM_PANES and TM_LATE are deleted first, so no run's publishes are duplicates of an earlier run's
 * (which the server would not store).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { parseEngineConfig } from "../runtime/config/config.js";
import { startEngine } from "../runtime/worker/start-engine.js";
import { silentLogger } from "./runtime-lag.js";
import { deletePaneStreams } from "./runtime-setup.js";

export interface EngineRun {
  ms: number;
  cpuMs: number;
  published: number;
  lateRecords: number;
  panes: number;
}

export async function engineRun(
  url: string,
  data: string,
  events: number,
  endTs: number,
  thread: boolean,
  flags: Record<string, string> = {},
): Promise<EngineRun> {
  const nc = await connect({ servers: url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  await deletePaneStreams(jsm);
  await nc.close();
  const config = parseEngineConfig({ flags: { nats: url, data, "metrics-port": "0", ...flags } });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const running = await startEngine(config, { logger: silentLogger(), paneThread: thread });
  const w = running.engine;
  while (!(w.eventsTotal >= events && (w.interleave.logTime ?? 0) >= endTs && running.host.sink.inFlight === 0))
    await new Promise((r) => setTimeout(r, 20));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  let panes = 0;
  for (const kinds of running.host.panesEmitted.values()) for (const n of kinds.values()) panes += n;
  const run = {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    published: running.host.sink.acked,
    lateRecords: w.lateRecords,
    panes,
  };
  await running.close();
  return run;
}

/**
 * `engineRun` in a child process of its own (engine-child.ts), after an untimed run there: the
 * engine's heap is its own, not the benchmark's (which holds the simulated events, their batches
 * and the baselines' work: docs/decisions/0051-engine-young-generation.md).
 */
export async function engineRunInChild(
  url: string,
  data: string,
  events: number,
  endTs: number,
  flags: Record<string, string> = {},
): Promise<{ warm: EngineRun; timed: EngineRun }> {
  const child = fileURLToPath(new URL("./engine-child.js", import.meta.url));
  const args = [child, url, data, String(events), String(endTs), JSON.stringify(flags)];
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, args, { encoding: "utf8" }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  return JSON.parse(out.trim().split("\n").at(-1) as string) as { warm: EngineRun; timed: EngineRun };
}
