/**
 * No role logs a secret (docs/security.md): ingest not the bearer token of a request, no role
 * the password in a NATS URL, at the most verbose log level. The built CLI, a real nats-server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnTidemark, startTestNats, waitFor, type TestNats } from "../index.js";

describe("role logs", () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startTestNats();
  });
  afterAll(() => nats?.stop());

  it("hold neither the bearer token nor the NATS password (trace level)", async () => {
    const token = "ingest-token-never-logged-4c1";
    const password = "nats-password-never-logged-e7";
    const cli = spawnTidemark(
      [
        "ingest",
        "--port",
        "0",
        "--nats",
        nats.url.replace("nats://", `nats://tm:${password}@`),
        "--log-level",
        "trace",
      ],
      { env: { TIDEMARK_INGEST_TOKENS: token } },
    );
    try {
      const url = String((await cli.ready).ingest);
      const post = (auth: string) =>
        fetch(`${url}/v1/events?token=${token}`, {
          method: "POST",
          body: '{"service":"logs"}\n',
          headers: { authorization: `Bearer ${auth}`, "content-type": "application/x-ndjson" },
        });
      expect((await post(token)).status).toBe(200);
      expect((await post(`${token}-wrong`)).status).toBe(401);
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
    expect(cli.output()).toContain("ingest listening");
    expect(cli.output()).toContain("nats://***@127.0.0.1");
    expect(cli.output()).not.toContain(token);
    expect(cli.output()).not.toContain(password);
  });

  it("of the engine and the merge operator hold no NATS password (debug level)", async () => {
    const password = "nats-password-engine-never-logged-3a";
    const url = nats.url.replace("nats://", `nats://tm:${password}@`);
    const dir = mkdtempSync(join(tmpdir(), "tidemark-log-secrets-"));
    const env = { TIDEMARK_LOG_LEVEL: "debug" };
    const roles = [
      spawnTidemark(["engine", "--nats", url, "--data", join(dir, "e"), "--metrics-port", "0"], { env }),
      spawnTidemark(["merge", "--nats", url, "--data", join(dir, "m"), "--metrics-port", "0"], { env }),
    ];
    try {
      await Promise.all(roles.map((r) => r.ready));
      // Its start line names the server it reached, the credentials masked.
      for (const r of roles)
        await waitFor(() => r.output().includes("nats://***@127.0.0.1"), 10_000, "the start line with the NATS URL");
    } finally {
      for (const r of roles) r.child.kill("SIGTERM");
      await Promise.all(roles.map((r) => r.exited));
      rmSync(dir, { recursive: true, force: true });
    }
    for (const r of roles) {
      expect(r.output()).toContain("nats://***@127.0.0.1");
      expect(r.output()).not.toContain(password);
    }
  });
});
