/**
 * The local ingest token of `tidemark up`: random, kept in <data>/ingest-token (mode 0600) so a
 * second `up` on the same data directory reuses it and configured clients keep working.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const TOKEN_FILE = "ingest-token";

export function localIngestToken(dataDir: string): { token: string; created: boolean } {
  return localToken(dataDir, TOKEN_FILE);
}

/** A random token kept in <data>/<name> (mode 0600), reused by the next `up` on the same data directory. */
export function localToken(dataDir: string, name: string): { token: string; created: boolean } {
  const file = join(dataDir, name);
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (/^[\x21-\x7e]{8,}$/.test(token)) return { token, created: false };
  }
  const token = `tm_${randomBytes(24).toString("base64url")}`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, token + "\n", { mode: 0o600 });
  return { token, created: true };
}

/** Every token ingest should accept: the local one first (the demo uses it), then those configured. */
export function tokenList(local: string, configured: readonly string[]): string[] {
  return [...new Set([local, ...configured])];
}
