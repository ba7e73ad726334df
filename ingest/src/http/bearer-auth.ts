/**
 * Bearer-token check for writes. Tokens are compared as SHA-256 digests with timingSafeEqual,
 * and never logged. With no tokens configured (loopback only, see config) writes are open.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { IngestError } from "../errors.js";

export const WWW_AUTHENTICATE = 'Bearer realm="tidemark-ingest"';

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

export class BearerAuth {
  private readonly digests: readonly Buffer[];
  constructor(tokens: readonly string[]) {
    this.digests = tokens.map(digest);
  }

  get open(): boolean {
    return this.digests.length === 0;
  }

  /** Throws TM_INGEST_UNAUTHORIZED unless `authorization` carries a configured token. */
  check(authorization: string | undefined): void {
    if (this.open) return;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!m) throw new IngestError("TM_INGEST_UNAUTHORIZED", "missing bearer token: send Authorization: Bearer <token>");
    const given = digest(m[1] as string);
    let ok = false;
    for (const d of this.digests) ok = timingSafeEqual(d, given) || ok;
    if (!ok) throw new IngestError("TM_INGEST_UNAUTHORIZED", "the bearer token is not valid for this ingest");
  }
}
