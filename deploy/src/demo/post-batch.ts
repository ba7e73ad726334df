/**
 * Posts one NDJSON batch to ingest's `POST /v1/events` and classifies the answer: accepted
 * (with per-record rejections), retry later (429/503 with Retry-After, or ingest unreachable),
 * or refused for good (401/400/413/415: never retried; docs/ingest.md, "Errors").
 */
import type { DemoEvent } from "./model.js";

export type PostOutcome =
  | { kind: "accepted"; accepted: number; rejected: number; firstError: string | undefined }
  | { kind: "retry"; afterMs: number; why: string }
  | { kind: "refused"; status: number; message: string };

export interface Batch {
  /** Sent as `Idempotency-Key`, so a retried batch is stored once. */
  readonly id: string;
  readonly events: readonly DemoEvent[];
}

const MAX_RETRY_AFTER_MS = 30_000;

export async function postBatch(url: string, token: string | undefined, batch: Batch): Promise<PostOutcome> {
  let body = "";
  for (const e of batch.events) body += JSON.stringify(e) + "\n";
  const headers: Record<string, string> = { "content-type": "application/x-ndjson", "idempotency-key": batch.id };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers, body });
  } catch (err) {
    return { kind: "retry", afterMs: 1000, why: `ingest unreachable (${causeOf(err)})` };
  }
  const text = await res.text();
  if (res.status === 429 || res.status === 503) {
    return {
      kind: "retry",
      afterMs: retryAfterMs(res.headers.get("retry-after")),
      why: `ingest answered ${res.status}`,
    };
  }
  if (res.status === 200 || res.status === 202) {
    const parsed = safeJson(text) as
      { accepted?: number; rejected?: number; errors?: Array<{ message?: string }> } | undefined;
    return {
      kind: "accepted",
      accepted: parsed?.accepted ?? batch.events.length,
      rejected: parsed?.rejected ?? 0,
      firstError: parsed?.errors?.[0]?.message,
    };
  }
  if (res.status >= 500) return { kind: "retry", afterMs: 1000, why: `ingest answered ${res.status}` };
  return { kind: "refused", status: res.status, message: text.slice(0, 300) };
}

/** Retry-After in seconds (or an HTTP date is not expected from ingest): default 1 s, capped. */
export function retryAfterMs(header: string | null): number {
  const seconds = header === null ? NaN : Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return 1000;
  return Math.min(Math.max(seconds * 1000, 100), MAX_RETRY_AFTER_MS);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function causeOf(err: unknown): string {
  const e = err as { cause?: { code?: string; message?: string }; message?: string };
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
