/** Child process of the benchmarks: runs ingest and reports its URL over IPC; closes on "stop". */
import { defineIngestConfig } from "../config.js";
import { startIngest } from "../server.js";

const natsUrl = process.argv[2] ?? "nats://127.0.0.1:4222";
/** Optional: parse workers and the smallest body they parse (parse-offload.ts compares settings). */
const parseWorkers = process.argv[3];
const parseOffloadBytes = process.argv[4];
const server = await startIngest(
  defineIngestConfig({
    port: 0,
    natsUrl,
    tokens: ["bench-token-123"],
    logLevel: "warn",
    ...(parseWorkers === undefined ? {} : { parseWorkers }),
    ...(parseOffloadBytes === undefined ? {} : { parseOffloadBytes }),
  }),
);
process.send?.({ url: server.url });
process.on("message", (m) => {
  if (m === "stop") void server.close().then(() => process.exit(0));
});
