import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";

/** test/artifacts/: screenshots of browser tests (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL("../../artifacts/", import.meta.url));

/** Debian's chromium, headless, in a fresh profile; never downloads a browser. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "tidemark-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env["TIDEMARK_CHROMIUM"] ?? "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1600, height: 1250 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
