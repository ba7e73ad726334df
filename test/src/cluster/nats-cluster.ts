/**
 * A real 3-node nats-server cluster on loopback ports, started from the very config file
 * operators use (deploy/nats/cluster-node.conf), with JetStream and auth. Stopped by PID.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, spawnNatsServer, type NatsServerProcess } from "@tidemark/deploy";
import { waitFor } from "../harness/processes.js";

export const CLUSTER_CONF = fileURLToPath(new URL("../../../deploy/nats/cluster-node.conf", import.meta.url));

interface NodePorts {
  name: string;
  client: number;
  cluster: number;
  monitor: number;
  storeDir: string;
}

export interface NatsCluster {
  /** Client URLs of every node. */
  readonly urls: readonly string[];
  /** The comma list roles take as --nats. */
  readonly servers: string;
  readonly user: string;
  readonly password: string;
  /** Monitoring URL of node i. */
  monitorUrl(i: number): string;
  pid(i: number): number;
  /** SIGKILL node i (no graceful shutdown: a machine dying). */
  crash(i: number): Promise<void>;
  /** Start node i again on the same ports and store. */
  start(i: number): Promise<void>;
  /** Stop every node and remove the stores. */
  stop(): Promise<void>;
}

/** A beforeAll that starts a cluster: two start attempts of up to 30 s each, then the test's own setup. */
export const CLUSTER_START_TIMEOUT_MS = 150_000;

/**
 * Starts the cluster on fresh loopback ports. Ports are picked free but only bound by nats-server
 * later, so a test running beside it can take one in between and the routes never form: an
 * attempt whose meta leader is not elected in 30 s is stopped (no node left behind) and one more is
 * made on new ports; the second failure is thrown with the first's reason.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  try {
    return await startNatsClusterOnce(size);
  } catch (first) {
    console.warn(`nats cluster: first start failed, retrying on new ports: ${String(first)}`);
    try {
      return await startNatsClusterOnce(size);
    } catch (second) {
      throw new Error(`nats cluster did not start twice: ${String(second)} (first: ${String(first)})`);
    }
  }
}

async function startNatsClusterOnce(size: number): Promise<NatsCluster> {
  const root = mkdtempSync(join(tmpdir(), "tidemark-cluster-"));
  const nodes: NodePorts[] = [];
  for (let i = 0; i < size; i++) {
    nodes.push({
      name: `n${i + 1}`,
      client: await freePort(),
      cluster: await freePort(),
      monitor: await freePort(),
      storeDir: join(root, `n${i + 1}`),
    });
  }
  const secrets = {
    route: "route-secret-for-tests",
    tidemark: "tidemark-secret-for-tests",
    sys: "sys-secret-for-tests",
  };
  const routes = Object.fromEntries(
    nodes.map((n, i) => [`TM_ROUTE_${i + 1}`, `nats-route://route:${secrets.route}@127.0.0.1:${n.cluster}`]),
  );
  const env = (n: NodePorts): NodeJS.ProcessEnv => ({
    ...process.env,
    ...routes,
    TM_NODE_NAME: n.name,
    TM_NODE_HOST: "127.0.0.1",
    TM_CLIENT_PORT: String(n.client),
    TM_MONITOR_PORT: String(n.monitor),
    TM_CLUSTER_PORT: String(n.cluster),
    TM_STORE_DIR: n.storeDir,
    TM_ROUTE_PASSWORD: secrets.route,
    TIDEMARK_NATS_PASSWORD: secrets.tidemark,
    TIDEMARK_NATS_SYS_PASSWORD: secrets.sys,
  });
  const launch = (n: NodePorts): Promise<NatsServerProcess> =>
    spawnNatsServer({
      port: n.client,
      storeDir: n.storeDir,
      monitorPort: n.monitor,
      configFile: CLUSTER_CONF,
      env: env(n),
    });
  const started = await Promise.allSettled(nodes.map(launch));
  const procs: Array<NatsServerProcess | undefined> = started.map((r) =>
    r.status === "fulfilled" ? r.value : undefined,
  );
  try {
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    await waitFor(
      () => metaLeaderElected(nodes.map((n) => n.monitor)),
      30_000,
      "the JetStream meta leader of the cluster",
      200,
    );
  } catch (err) {
    await Promise.all(procs.map((p) => p?.stop()));
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const node = (i: number): NodePorts => {
    const n = nodes[i];
    if (!n) throw new RangeError(`no node ${i}`);
    return n;
  };
  const urls = nodes.map((n) => `nats://127.0.0.1:${n.client}`);
  return {
    urls,
    servers: urls.join(","),
    user: "tidemark",
    password: secrets.tidemark,
    monitorUrl: (i) => `http://127.0.0.1:${node(i).monitor}`,
    pid: (i) => procs[i]?.pid ?? -1,
    crash: async (i) => {
      const p = procs[i];
      if (!p) return;
      process.kill(p.pid, "SIGKILL");
      await p.exited;
      procs[i] = undefined;
    },
    start: async (i) => {
      procs[i] ??= await launch(node(i));
    },
    stop: async () => {
      await Promise.all(procs.map((p) => p?.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** True once every node reports the same JetStream meta leader over the full cluster size. */
async function metaLeaderElected(monitorPorts: readonly number[]): Promise<boolean> {
  const leaders = await Promise.all(
    monitorPorts.map(async (port) => {
      try {
        const jsz = (await (await fetch(`http://127.0.0.1:${port}/jsz`)).json()) as {
          meta_cluster?: { leader?: string; cluster_size?: number };
        };
        return jsz.meta_cluster?.cluster_size === monitorPorts.length ? jsz.meta_cluster.leader : undefined;
      } catch {
        return undefined;
      }
    }),
  );
  return leaders[0] !== undefined && leaders[0] !== "" && leaders.every((l) => l === leaders[0]);
}
