/**
 * Ingest never logs a secret (docs/security.md): not the bearer token of a request, not the
 * password in a NATS URL, at the most verbose log level. The built CLI, a real nats-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnTidemark, startTestNats, type TestNats } from "../index.js";

describe("ingest logs", () => {
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
});
