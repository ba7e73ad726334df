/**
 * Collects the outcome of one request's records: accepted events, the rejected count, the first
 * 100 per-record errors, clamp counts. Enforces the per-request event limit (413).
 */
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import { IngestError } from "../errors.js";
import type { Normalized, RecordError, RejectReason } from "./normalize-event.js";

export const MAX_REPORTED_ERRORS = 100;

export class RecordBatch {
  readonly events: TelemetryEvent[] = [];
  readonly errors: RecordError[] = [];
  rejected = 0;
  clamped = 0;
  readonly rejectedBy: Record<RejectReason, number> = { invalid: 0, too_old: 0 };
  private records = 0;

  constructor(private readonly maxEvents: number) {}

  /** Counts one more record; throws 413 past the per-request limit. */
  private count(): void {
    if (++this.records > this.maxEvents)
      throw new IngestError(
        "TM_INGEST_TOO_MANY_EVENTS",
        `more than ${this.maxEvents} records in one request: split it into smaller requests`,
      );
  }

  /** A record that is not an event (an OTLP span neither server nor root): counted toward the limit all the same. */
  skip(): void {
    this.count();
  }

  add(result: Normalized, index: number): void {
    if (!result.ok) return this.reject(index, result.field, result.message, result.reason);
    this.count();
    this.events.push(result.event);
    if (result.clamped) this.clamped++;
  }

  reject(index: number, field: string, message: string, reason: RejectReason = "invalid"): void {
    this.count();
    this.rejected++;
    this.rejectedBy[reason]++;
    if (this.errors.length < MAX_REPORTED_ERRORS) this.errors.push({ index, field, message });
  }
}
