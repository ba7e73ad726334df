/**
 * TLS for ingest HTTP from certificate and key files (docs/security.md, "TLS"), and URLs with
 * their credentials removed before they are logged.
 */
import { readFileSync } from "node:fs";
import type { IngestConfig } from "../config.js";
import { IngestError } from "../errors.js";

/** Fastify's `https` option from tlsCertFile / tlsKeyFile, or nothing (plain HTTP). */
export function tlsOptions(config: Pick<IngestConfig, "tlsCertFile" | "tlsKeyFile">): {
  https?: { cert: Buffer; key: Buffer };
} {
  if (config.tlsCertFile === null || config.tlsKeyFile === null) return {};
  return { https: { cert: pem(config.tlsCertFile, "tlsCert"), key: pem(config.tlsKeyFile, "tlsKey") } };
}

function pem(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new IngestError(
      "TM_INGEST_CONFIG",
      `config ${field}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"}): give a readable PEM file`,
    );
  }
}
