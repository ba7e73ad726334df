/**
 * `tidemark up` with the dashboard bound off loopback and no read token configured: it generates
 * one, keeps it in <data>/dashboard-token (0600), prints it beside the ingest token, and the
 * dashboard it starts holds every read behind it (docs/security.md). The built CLI, real processes.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive, spawnTidemark, waitFor } from "../index.js";

describe("tidemark up off loopback", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-read-"));
  const data = join(dir, "data");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("generates a read token, prints it beside the ingest token, and the dashboard requires it", async () => {
    const up = spawnTidemark(
      ["up", "--no-demo", "--data", data, "--ingest-port", "0", "--dashboard-port", "0", "--workers", "1"],
      { cwd: dir, env: { TIDEMARK_DASHBOARD_HOST: "0.0.0.0" }, readyTimeoutMs: 60_000 },
    );
    let pids: number[] = [];
    try {
      const ready = await up.ready;
      pids = Object.values(ready.pids as Record<string, number>);
      const readToken = String(ready.readToken);
      expect(readToken).toMatch(/^tm_[\w-]{32}$/);
      expect(readToken).not.toBe(String(ready.token));
      const file = join(data, "dashboard-token");
      expect(readFileSync(file, "utf8").trim()).toBe(readToken);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const out = up.output();
      const tokenLine = out.split("\n").findIndex((l) => l.includes(`token      ${String(ready.token)}`));
      expect(out.split("\n")[tokenLine + 1]).toContain(`read token ${readToken}`);
      const port = new URL(String(ready.dashboard)).port;
      const api = `http://127.0.0.1:${port}/api/status`;
      expect((await fetch(api)).status).toBe(401);
      expect((await fetch(api, { headers: { authorization: `Bearer ${readToken}` } })).status).toBe(200);
    } finally {
      up.child.kill("SIGINT");
      await up.exited;
    }
    for (const pid of pids) await waitFor(() => !isAlive(pid), 15_000, `child pid ${pid} to exit`);
  });
});
