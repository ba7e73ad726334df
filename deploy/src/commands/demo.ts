import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { Fields } from "../config/fields.js";
import { runSender } from "../demo/sender.js";
import { readyLine } from "../ready-line.js";
import { stopRequested } from "../stop-request.js";

/**
 * `tidemark demo`: realistic telemetry posted to ingest (docs/operations.md, "`tidemark demo`").
 * The event model is pure and seeded (deploy/src/demo/model.ts); this command only wires flags, the
 * clock and HTTP. The token comes from --token, else the first of TIDEMARK_INGEST_TOKENS.
 */
export const demo: Command = {
  summary: "post realistic demo telemetry to ingest (late tail, error bursts, slow spells, sessions)",
  usage:
    "tidemark demo [--ingest URL] [--token T] [--rate 500] [--corr 0..1] [--duration 10m] [--seed N] [--config FILE]",
  async run(flags: Flags): Promise<number> {
    const config = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const f = new Fields("flags");
    const num = (name: string, fallback: number, min: number, max: number): number => {
      const v = flags.get(name);
      return v === undefined
        ? fallback
        : f.number(v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v, `--${name}`, min, max);
    };
    const duration = flags.get("duration");
    const ingest = flags.get("ingest") ?? process.env.TIDEMARK_INGEST_URL ?? "http://127.0.0.1:4318";
    const token = flags.get("token") ?? process.env.TIDEMARK_INGEST_TOKENS?.split(",")[0]?.trim();
    const rate = num("rate", config.demo.rate, 1, 1_000_000);
    const corr = num("corr", config.demo.corr, 0, 1);
    const log = (line: string): void => void process.stderr.write(`tidemark demo: ${line}\n`);
    const abort = new AbortController();
    void stopRequested().then(() => abort.abort());
    log(`posting ${rate} events/s to ${ingest}/v1/events (corr ${corr}); late events are held back up to 90 s`);
    const stats = await runSender(
      {
        ingest,
        token: token === "" ? undefined : token,
        rate,
        corr,
        seed: Math.trunc(num("seed", config.demo.seed, 0, 2 ** 32 - 1)),
        durationMs: duration === undefined ? undefined : f.durationMs(duration, "--duration"),
        log,
        onFirstAccepted: () =>
          void process.stdout.write(readyLine({ demo: { ingest, rate, corr, pid: process.pid } }) + "\n"),
      },
      abort.signal,
    );
    process.stdout.write(`tidemark demo done ${JSON.stringify(stats)}\n`);
    log(
      `stopped: ${stats.accepted} events accepted (${stats.late} from the late tail), ${stats.rejected} rejected, ` +
        `${stats.retries} retries, ${stats.unsent} held back and not sent, ${stats.shed} shed`,
    );
    return 0;
  },
};
