/** Child process of the benchmark: runs ingest and reports its URL over IPC; closes on "stop". */
import { defineIngestConfig } from "../config.js";
import { startIngest } from "../server.js";

const natsUrl = process.argv[2] ?? "nats://127.0.0.1:4222";
const server = await startIngest(
  defineIngestConfig({ port: 0, natsUrl, tokens: ["bench-token-123"], logLevel: "warn" }),
);
process.send?.({ url: server.url });
process.on("message", (m) => {
  if (m === "stop") void server.close().then(() => process.exit(0));
});
