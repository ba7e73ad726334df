/**
 * TLS for ingest HTTP and gRPC from certificate and key files (docs/security.md, "TLS"), and URLs with
 * their credentials removed before they are logged.
 */
import { readFileSync } from "node:fs";
import type { IngestConfig } from "../config.js";
import { IngestError } from "../errors.js";

/** Fastify's `https` option from tlsCertFile / tlsKeyFile, or nothing (plain HTTP). */
export function tlsOptions(config: Pick<IngestConfig, "tlsCertFile" | "tlsKeyFile">): {
  https?: { cert: Buffer; key: Buffer };
} {
  const files = tlsFiles(config);
  return files ? { https: files } : {};
}

/** The certificate and key read from tlsCertFile / tlsKeyFile (HTTP and gRPC alike), or undefined. */
export function tlsFiles(
  config: Pick<IngestConfig, "tlsCertFile" | "tlsKeyFile">,
): { cert: Buffer; key: Buffer } | undefined {
  if (config.tlsCertFile === null || config.tlsKeyFile === null) return undefined;
  return { cert: pem(config.tlsCertFile, "tlsCert"), key: pem(config.tlsKeyFile, "tlsKey") };
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
