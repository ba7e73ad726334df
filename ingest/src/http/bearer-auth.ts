/**
 * Bearer-token check for writes. Tokens are compared as SHA-256 digests with timingSafeEqual,
 * and never logged. With no tokens configured (loopback only, see config) writes are open. A
 * token's identity (the start of its digest) keys its limits and its message ids
 * (docs/security.md, "Idempotency").
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { IngestError } from "../errors.js";

export const WWW_AUTHENTICATE = 'Bearer realm="tidemark-ingest"';

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/** The identity of writes when no tokens are configured. */
export const OPEN_IDENTITY = "open";

/** A token's identity: the first 16 hex digits of its SHA-256 (names it without revealing it). */
export function tokenIdentity(token: string): string {
  return digest(token).toString("hex").slice(0, 16);
}

export class BearerAuth {
  private readonly digests: readonly Buffer[];
  constructor(tokens: readonly string[]) {
    this.digests = tokens.map(digest);
  }

  get open(): boolean {
    return this.digests.length === 0;
  }

  /** The identity of the token `authorization` carries; throws TM_INGEST_UNAUTHORIZED unless it is a configured one. */
  check(authorization: string | undefined): string {
    if (this.open) return OPEN_IDENTITY;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!m) throw new IngestError("TM_INGEST_UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <token>");
    const given = digest(m[1] as string);
    let ok = false;
    for (const d of this.digests) ok = timingSafeEqual(d, given) || ok;
    if (!ok) throw new IngestError("TM_INGEST_UNAUTHORIZED", "the bearer token is not valid for this ingest");
    return given.toString("hex").slice(0, 16);
  }
}
