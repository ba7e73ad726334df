/**
 * Delivers one batch of `tidemark load` (docs/operations.md, "`tidemark load`", "Sending"):
 * posts it, resends it with the same Idempotency-Key after a 429, a 5xx or no answer (waiting as
 * retry-policy.ts says), and accounts for it once: the accepted records into the counters, the
 * ledger and the record file; a refused batch into `refused`; a batch given up on into `unsent`.
 */
import { performance } from "node:perf_hooks";
import type { DDSketch } from "@tidemark/sketches";
import { DeployError } from "../errors.js";
import { batchBody, recordLines, type LoadBatch } from "./batch.js";
import { causeOf, type HttpAnswer } from "./ingest-client.js";
import { readAcceptedAnswer } from "./ingest-answer.js";
import type { AcceptedLedger } from "./ledger.js";
import { pause } from "./pause.js";
import type { LoadCounters } from "./report.js";
import { classifyStatus, retryDelayMs } from "./retry-policy.js";

export interface DeliveryDeps {
  client: { post(body: string, key: string): Promise<HttpAnswer> };
  counters: LoadCounters;
  ledger: AcceptedLedger;
  /** HTTP latency per answered POST, ms. */
  latency: DDSketch;
  record: { write(chunk: string): Promise<void> } | undefined;
  log: (line: string) => void;
  /** Base URL of ingest, for messages. */
  ingest: string;
  /** When the run started (wall ms). */
  startedAt: number;
  /** With no answer at all by this long after the start, ingest is unreachable: the run stops. */
  unreachableAfterMs: number;
  /** Aborted when the run stops (a fatal answer) or gives up waiting at the end. */
  stop: AbortSignal;
  /** Stops the run with this error. */
  fail: (err: DeployError) => void;
}

export class Delivery {
  private answered = false;
  private readonly logged = new Set<string>();

  constructor(private readonly deps: DeliveryDeps) {}

  async deliver(b: LoadBatch): Promise<void> {
    const { counters, stop } = this.deps;
    const body = batchBody(b);
    for (let attempt = 1; ; attempt++) {
      if (stop.aborted) return void (counters.unsent += b.events.length);
      if (attempt > 1) counters.retries++;
      const sentAt = Date.now();
      const answer = await this.attempt(body, b.key);
      const verdict = answer === undefined ? "retry" : classifyStatus(answer.status);
      if (answer !== undefined && verdict === "accepted") return this.accepted(b, answer, sentAt);
      if (answer !== undefined && verdict === "refused") return this.refused(b, answer);
      if (answer !== undefined && verdict === "fatal") {
        counters.unsent += b.events.length;
        return this.deps.fail(refusedError(answer));
      }
      if (!this.answered && Date.now() - this.deps.startedAt >= this.deps.unreachableAfterMs) {
        counters.unsent += b.events.length;
        return this.deps.fail(unreachable(this.deps.ingest, this.deps.unreachableAfterMs));
      }
      const waitMs = retryDelayMs(attempt, answer?.retryAfter, Math.random());
      this.once(answer ? `status ${answer.status}` : "no answer", `retrying in ${waitMs} ms (same Idempotency-Key)`);
      await pause(waitMs, stop);
    }
  }

  /** One POST; undefined when no answer came. Counts the answer and its latency. */
  private async attempt(body: string, key: string): Promise<HttpAnswer | undefined> {
    const { counters, latency } = this.deps;
    const t0 = performance.now();
    try {
      const answer = await this.deps.client.post(body, key);
      latency.add(Math.max(performance.now() - t0, 0.001));
      counters.posts++;
      if (answer.status >= 400 && answer.status < 500) counters.http4xx++;
      if (answer.status >= 500) counters.http5xx++;
      this.answered = true;
      return answer;
    } catch (err) {
      if (this.deps.stop.aborted) return undefined;
      counters.connectionErrors++;
      this.once(`no answer: ${causeOf(err)}`, "");
      return undefined;
    }
  }

  private async accepted(b: LoadBatch, answer: HttpAnswer, sentAt: number): Promise<void> {
    const { counters, ledger, record } = this.deps;
    const a = readAcceptedAnswer(answer.body, b.events.length);
    if (!a.exact) ledger.markInexact();
    const rejected = Math.max(a.rejected, a.rejectedIndices.size);
    counters.rejected += rejected;
    counters.accepted += b.events.length - rejected;
    b.events.forEach((e, i) => {
      if (!a.rejectedIndices.has(i)) ledger.add(e);
    });
    if (a.firstError !== undefined) this.once("rejected", `ingest rejected records, e.g.: ${a.firstError}`);
    if (record) await record.write(recordLines(b, a.rejectedIndices, sentAt));
  }

  private refused(b: LoadBatch, answer: HttpAnswer): void {
    this.deps.counters.refused += b.events.length;
    this.once(`refused ${answer.status}`, `a batch of ${b.events.length}, not resent: ${answer.body.slice(0, 300)}`);
  }

  /** Logs `what` the first time it happens. */
  private once(what: string, detail: string): void {
    if (this.logged.has(what)) return;
    this.logged.add(what);
    this.deps.log(detail === "" ? what : `${what}: ${detail}`);
  }
}

function refusedError(answer: HttpAnswer): DeployError {
  const hint =
    answer.status === 401 || answer.status === 403
      ? "pass the token `tidemark up` printed with --token or TIDEMARK_INGEST_TOKENS"
      : answer.status === 404 || answer.status === 405
        ? "check that --ingest is the ingest's base URL, e.g. http://127.0.0.1:4318"
        : "see docs/ingest.md, Errors";
  return new DeployError(
    "TM_LOAD_REFUSED",
    `ingest refused a batch with ${answer.status} (${answer.body.slice(0, 200)}): ${hint}`,
  );
}

function unreachable(ingest: string, afterMs: number): DeployError {
  return new DeployError(
    "TM_LOAD_UNREACHABLE",
    `ingest at ${ingest} never answered in ${afterMs / 1000} s: start it (tidemark up or tidemark ingest) or pass --ingest URL`,
  );
}
