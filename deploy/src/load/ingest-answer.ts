/**
 * Reads ingest's 2xx answer to a batch, `{accepted, rejected, clamped, errors: [{index, …}]}`
 * (docs/ingest.md, "`POST /v1/events`"), into which records of the batch were accepted: all but
 * those named by index. Ingest names at most 100; when it rejected more, or clamped a future
 * `ts` (which moves the event to another window), the answer is not exact. Pure.
 */
export interface AcceptedAnswer {
  /** Indices (0-based, in the batch) of the records ingest rejected and named. */
  rejectedIndices: ReadonlySet<number>;
  /** Records rejected, as ingest counted them. */
  rejected: number;
  clamped: number;
  /** True when every rejected record is named and none was clamped. */
  exact: boolean;
  /** The first rejection's message, for the log. */
  firstError: string | undefined;
}

interface Body {
  accepted?: unknown;
  rejected?: unknown;
  clamped?: unknown;
  errors?: unknown;
}

export function readAcceptedAnswer(text: string, records: number): AcceptedAnswer {
  let body: Body;
  try {
    body = JSON.parse(text) as Body;
  } catch {
    return { rejectedIndices: new Set(), rejected: 0, clamped: 0, exact: false, firstError: undefined };
  }
  const rejected = count(body?.rejected);
  const clamped = count(body?.clamped);
  const indices = new Set<number>();
  let firstError: string | undefined;
  for (const e of Array.isArray(body?.errors) ? (body.errors as unknown[]) : []) {
    const { index, message } = (e ?? {}) as { index?: unknown; message?: unknown };
    if (typeof index === "number" && Number.isInteger(index) && index >= 0 && index < records) indices.add(index);
    firstError ??= typeof message === "string" ? message : undefined;
  }
  const accepted = count(body?.accepted);
  const exact =
    indices.size === rejected && clamped === 0 && typeof body?.accepted === "number" && accepted + rejected === records;
  return { rejectedIndices: indices, rejected, clamped, exact, firstError };
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0;
}
