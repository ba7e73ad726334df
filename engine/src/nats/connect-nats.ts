/** Connecting a role to NATS, with a coded error that says what to do when it fails. */
import { connect, type ConnectionOptions, type NatsConnection } from "@nats-io/transport-node";
import { natsConnectOptions } from "./connect-options.js";
import { NatsError } from "./errors.js";

export async function connectNats(url: string, extra: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  try {
    return await connect({ ...natsConnectOptions(url), noAsyncTraces: true, ...extra });
  } catch (err) {
    throw new NatsError(
      "TM_NATS_UNREACHABLE",
      `cannot reach NATS at ${url} (${(err as Error).message}): start nats-server (tidemark up does), or pass --nats URL / set TIDEMARK_NATS_URL`,
    );
  }
}
