/**
 * The config file of the nats-server `tidemark up` starts (docs/security.md, "NATS under `up`"):
 * loopback only, JetStream in <data>/nats, and a token the server reads from its environment
 * ($TIDEMARK_NATS_SERVER_TOKEN), so neither the file nor a command line holds the secret.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const NATS_TOKEN_FILE = "nats-token";
export const NATS_CONFIG_FILE = "nats-server.conf";

export function writeNatsConfig(dataDir: string, o: { port: number; monitorPort: number; storeDir: string }): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, NATS_CONFIG_FILE);
  const text = [
    "# Written by `tidemark up` at each start (docs/security.md): edits are overwritten.",
    'host: "127.0.0.1"',
    `port: ${o.port}`,
    `http: "127.0.0.1:${o.monitorPort}"`,
    `jetstream { store_dir: ${JSON.stringify(o.storeDir)} }`,
    "authorization { token: $TIDEMARK_NATS_SERVER_TOKEN }",
    "",
  ].join("\n");
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}
