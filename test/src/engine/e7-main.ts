/**
 * `npm run experiment:e7 -w test`: runs E7 twice on a throwaway nats-server — without idleness
 * (idle timeout 1 h) and with it (2 s) — and prints both timelines.
 */
import { startTestNats } from "../harness/nats.js";
import { runE7 } from "./e7-experiment.js";

const log = (line: string): void => void process.stdout.write(line + "\n");

async function main(): Promise<void> {
  for (const idleTimeout of ["1h", "2s"]) {
    const nats = await startTestNats();
    try {
      log("");
      await runE7({ natsUrl: nats.url, idleTimeout, log });
    } finally {
      await nats.stop();
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`E7 failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
