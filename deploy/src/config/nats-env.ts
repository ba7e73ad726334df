/**
 * The environment a role needs to reach NATS with the configured credentials: every role reads
 * TIDEMARK_NATS_USER / TIDEMARK_NATS_PASSWORD / TIDEMARK_NATS_TOKEN (natsConnectOptions in
 * @tidemark/engine/nats). Secrets travel in the environment, never on a command line.
 */
import type { NatsSettings } from "./nats-section.js";

export function natsCredentialEnv(nats: NatsSettings): Record<string, string> {
  const env: Record<string, string> = {};
  if (nats.user !== undefined) env.TIDEMARK_NATS_USER = nats.user;
  if (nats.password !== undefined) env.TIDEMARK_NATS_PASSWORD = nats.password;
  if (nats.token !== undefined) env.TIDEMARK_NATS_TOKEN = nats.token;
  return env;
}
