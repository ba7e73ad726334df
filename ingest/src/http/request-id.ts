/**
 * The request id names a request across client retries: `Idempotency-Key`, else `X-Request-Id`,
 * else a fresh UUID. It becomes `Nats-Msg-Id = <id>:<partition>`, so a retry of a request that
 * JetStream already stored (wholly or partly) is deduplicated within the stream's 2-minute window.
 */
import { randomUUID } from "node:crypto";
import { IngestError } from "../errors.js";

const VALID = /^[\x21-\x7e]{1,128}$/;

export function requestIdOf(headers: Record<string, string | string[] | undefined>): string {
  for (const name of ["idempotency-key", "x-request-id"]) {
    const v = headers[name];
    if (v === undefined) continue;
    const id = Array.isArray(v) ? v[0] : v;
    if (id === undefined || !VALID.test(id))
      throw new IngestError(
        "TM_INGEST_BAD_REQUEST_ID",
        `${name} must be 1 to 128 printable ASCII characters without spaces`,
      );
    return id;
  }
  return randomUUID();
}
