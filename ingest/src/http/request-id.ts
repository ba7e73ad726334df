/**
 * The request id names a request across client retries: `Idempotency-Key`, else `X-Request-Id`,
 * else a fresh UUID. It becomes `Nats-Msg-Id = <id>:<token identity>:<body hash>:<partition>`
 * (docs/security.md, "Idempotency"), so a retry of a request that JetStream already stored
 * (wholly or partly) is deduplicated within the stream's 2-minute window, and a reused key with
 * another body or from another client is never deduplicated away.
 */
import { randomUUID } from "node:crypto";
import { IngestError } from "../errors.js";

const VALID = /^[\x21-\x7e]{1,128}$/;

export interface RequestId {
  readonly id: string;
  /** The header the client named the request in (a key it may reuse), or null for a generated id. */
  readonly header: "Idempotency-Key" | "X-Request-Id" | null;
}

export function requestIdOf(headers: Record<string, string | string[] | undefined>): RequestId {
  for (const name of ["idempotency-key", "x-request-id"]) {
    const v = headers[name];
    if (v === undefined) continue;
    const id = Array.isArray(v) ? v[0] : v;
    if (id === undefined || !VALID.test(id))
      throw new IngestError(
        "TM_INGEST_BAD_REQUEST_ID",
        `${name} must be 1 to 128 printable ASCII characters without spaces`,
      );
    return { id, header: name === "idempotency-key" ? "Idempotency-Key" : "X-Request-Id" };
  }
  return { id: randomUUID(), header: null };
}
