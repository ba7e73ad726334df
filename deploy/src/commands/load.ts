import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { loadTidemarkConfig } from "../config/tidemark-config.js";
import { DeployError } from "../errors.js";
import { EngineLag } from "../load/engine-lag.js";
import { readLoadOptions, type LoadOptions } from "../load/load-options.js";
import { runLoad, type LoadResult } from "../load/load-run.js";
import { LedgerFile, RecordFile } from "../load/record-file.js";
import { doneLine, doneRecord, summaryLines, type DoneRecord } from "../load/report.js";
import { sessionShape } from "../load/session-shape.js";
import { stopRequested } from "../stop-request.js";

/**
 * `tidemark load`: a live load shaped like real traffic, counted exactly (docs/operations.md,
 * "`tidemark load`"). The traffic model is pure and seeded (deploy/src/load/model.ts); the run
 * (load/load-run.ts) holds the clock and HTTP; this command wires flags, files and tm.status.
 */
export const load: Command = {
  summary: "put a live load shaped like real traffic on ingest and count exactly what it accepted",
  usage:
    "tidemark load [--rate 1000] [--duration 30s] [--services 24] [--routes 5] [--users 20000] [--senders 4] " +
    "[--batch 500] [--ingest URL] [--token T] [--seed N] [--corr 0..1] [--nats URL] [--accepted FILE] " +
    "[--record FILE] [--window 10s] [--config FILE]",
  async run(flags: Flags): Promise<number> {
    const config = loadTidemarkConfig({ flag: flags.get("config"), env: process.env });
    const o = readLoadOptions(flags, process.env, config.nats.url);
    const log = (line: string): void => void process.stderr.write(`tidemark load: ${line}\n`);
    const ledgerFile = o.accepted === undefined ? undefined : new LedgerFile(o.accepted);
    const record = o.record === undefined ? undefined : new RecordFile(o.record);
    const { user, password: pass, token } = config.nats;
    const lag = o.nats === undefined ? undefined : await EngineLag.connect(o.nats, { user, pass, token });
    const abort = new AbortController();
    void stopRequested().then(() => abort.abort());
    log(describe(o));
    const result = await runLoad({ ...o, record, lag: lag?.tracker, log }, abort.signal);
    // The figures at the end: one more status from each worker heard from (at most 2.5 s).
    if (lag && lag.tracker.workers > 0) await lag.fresh(lag.tracker.workers, 2500);
    await lag?.close();
    const closed = await record?.close().then(
      () => undefined,
      (err: Error) => err,
    );
    const done = doneOf(o, result, lag);
    ledgerFile?.write({ ...result.ledger.toJSON(), seed: o.seed, rate: o.rate, startedAt: result.startedAt });
    for (const line of summaryLines(done, lag !== undefined)) log(line);
    const failure = result.failure ?? closed ?? nothingAccepted(done);
    if (failure) throw failure;
    process.stdout.write(doneLine(done) + "\n");
    return 0;
  },
};

/** A run in which ingest took none of the events it was sent has not put any load on the stack. */
function nothingAccepted(d: DoneRecord): DeployError | undefined {
  if (d.accepted > 0 || d.generated === 0) return undefined;
  return new DeployError(
    "TM_LOAD_REFUSED",
    `ingest accepted none of ${d.generated} events (${d.http5xx} answers 5xx, ${d.http4xx} 4xx, ` +
      `${d.connectionErrors} attempts without an answer): see the messages above`,
  );
}

function describe(o: LoadOptions): string {
  const s = sessionShape(o.rate, o.users);
  return (
    `${o.rate} events/s for ${o.durationMs / 1000} s to ${o.ingest}/v1/events with ${o.senders} senders, ` +
    `batches of up to ${o.batch}; ${o.services} services × ${o.routes} routes; ${o.users} users thinking ` +
    `~${(s.thinkMeanMs / 1000).toFixed(1)} s between requests, ~${Math.round(s.requestsMean)} requests a session, ` +
    `then quiet ≥ 60 s; 8 % of events sent 1–30 s late (corr ${o.corr}), and what is still held back at the end sent at once`
  );
}

function doneOf(o: LoadOptions, r: LoadResult, lag: EngineLag | undefined): DoneRecord {
  const answered = r.httpLatency.count > 0;
  return doneRecord({
    counters: r.counters,
    rate: o.rate,
    durationMs: o.durationMs,
    elapsedMs: r.endedAt - r.startedAt,
    http: answered ? { p50: r.httpLatency.quantile(0.5), p99: r.httpLatency.quantile(0.99) } : null,
    lag: lag && { worst: lag.tracker.worst(), maxP99: lag.tracker.maxP99 },
    exact: r.ledger.isExact,
  });
}
