import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { DeployError } from "../errors.js";

/** A nats-server child process started by tidemark (docs/architecture.md, "Packages and boundaries"). */
export interface NatsServerProcess {
  readonly pid: number;
  readonly host: string;
  readonly port: number;
  /** `nats://host:port`. */
  readonly url: string;
  /** HTTP monitoring endpoint, when a monitor port was requested. */
  readonly monitorUrl: string | undefined;
  readonly storeDir: string;
  /** Resolves when the process has exited (by itself or by stop()). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface NatsServerOptions {
  host?: string;
  port: number;
  storeDir: string;
  monitorPort?: number;
  /** Extra nats-server arguments (e.g. `--cluster`). */
  args?: string[];
  /** How long to wait for "Server is ready". */
  readyTimeoutMs?: number;
  /** Receives each line nats-server logs. */
  onLog?: (line: string) => void;
  binary?: string;
  /**
   * Run from this config file instead of flags (`-c FILE` only); `host`, `port`, `storeDir` and
   * `monitorPort` must then match what the file says (they name the URLs returned).
   */
  configFile?: string;
  /** Own process group, so a terminal's Ctrl-C reaches the parent alone (it stops us in order). */
  detached?: boolean;
  /** Environment of the process (a config file's $VARIABLES are read from it). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `nats-server -js` bound to `host` with its store in `storeDir`, and resolves once it
 * logs that it is ready. Rejects with TM_NATS_START_FAILED (with the log tail) otherwise.
 */
export async function spawnNatsServer(opts: NatsServerOptions): Promise<NatsServerProcess> {
  const host = opts.host ?? "127.0.0.1";
  mkdirSync(opts.storeDir, { recursive: true });
  const args =
    opts.configFile !== undefined
      ? ["-c", opts.configFile]
      : ["-js", "-a", host, "-p", String(opts.port), "-sd", opts.storeDir];
  if (opts.monitorPort !== undefined && opts.configFile === undefined) args.push("-m", String(opts.monitorPort));
  args.push(...(opts.args ?? []));
  const child = spawn(opts.binary ?? "nats-server", args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: opts.env ?? process.env,
    detached: opts.detached ?? false,
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const tail: string[] = [];
  await waitReady(child, tail, opts.readyTimeoutMs ?? 15_000, opts.onLog);
  const pid = child.pid ?? -1;
  return {
    pid,
    host,
    port: opts.port,
    url: `nats://${host}:${opts.port}`,
    monitorUrl: opts.monitorPort === undefined ? undefined : `http://${host}:${opts.monitorPort}`,
    storeDir: opts.storeDir,
    exited,
    stop: (graceMs = 5000) => stopChild(child, exited, graceMs),
  };
}

function waitReady(
  child: ChildProcess,
  tail: string[],
  timeoutMs: number,
  onLog: ((line: string) => void) | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new DeployError("TM_NATS_START_FAILED", `nats-server did not start: ${why}\n${tail.join("\n")}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${timeoutMs} ms`), timeoutMs);
    child.once("error", (err) =>
      fail(`${err.message} (is nats-server installed? apt-get install nats-server, or brew install nats-server)`),
    );
    const onExit = (code: number | null): void => fail(`exited with code ${code}`);
    child.once("exit", onExit);
    let buffered = "";
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        tail.push(line);
        if (tail.length > 20) tail.shift();
        onLog?.(line);
        if (line.includes("Server is ready")) {
          clearTimeout(timer);
          child.removeListener("exit", onExit);
          resolve();
        }
      }
    };
    child.stderr?.on("data", onData);
    child.stdout?.on("data", onData);
  });
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
