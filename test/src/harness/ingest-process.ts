/**
 * A real nats-server and a real `tidemark ingest` process on a free port with one bearer token,
 * plus a NATS connection to read what it stored: the rig of the tests that drive ingest from
 * another CLI process (`tidemark demo`, `tidemark load`).
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { spawnTidemark, startTestNats, type CliProcess, type TestNats } from "../index.js";

export interface IngestProcess {
  readonly nats: TestNats;
  readonly ingest: CliProcess;
  /** http://127.0.0.1:port of the ingest. */
  readonly url: string;
  /** Connected to the rig's nats-server; reconnect() after a restart of nats-server. */
  nc: NatsConnection;
  reconnect(): Promise<void>;
  stop(): Promise<void>;
}

export async function startIngestProcess(token: string): Promise<IngestProcess> {
  const nats = await startTestNats();
  const ingest = spawnTidemark(["ingest", "--port", "0", "--nats", nats.url], {
    env: { TIDEMARK_INGEST_TOKENS: token },
  });
  const url = String((await ingest.ready).ingest);
  const rig: IngestProcess = {
    nats,
    ingest,
    url,
    nc: await connect({ servers: nats.url, noAsyncTraces: true }),
    async reconnect() {
      await rig.nc.close();
      rig.nc = await connect({ servers: nats.url, noAsyncTraces: true });
    },
    async stop() {
      await rig.nc.close();
      ingest.child.kill("SIGTERM");
      await ingest.exited;
      await nats.stop();
    },
  };
  return rig;
}
