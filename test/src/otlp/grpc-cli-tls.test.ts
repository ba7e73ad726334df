/**
 * The `tidemark ingest` process names its OTLP/gRPC address in the ready line (off with
 * `--grpc-port 0`), and serves gRPC over TLS with ingest's certificate and key
 * (docs/ingest.md, "OTLP/gRPC"): a self-signed certificate made here by openssl.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, credentials, status } from "@grpc/grpc-js";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { spawnTidemark, startTestNats, type TestNats } from "../index.js";
import { selfSignedCert } from "../harness/self-signed.js";
import { serverSpans } from "../ingest/otlp-spans.js";
import { TOKEN, startIngestFixture } from "../ingest/ingest-fixture.js";
import { TRACE_EXPORT, closeClients, grpcClient, unary } from "./grpc-client.js";

describe("ingest's ready line names the gRPC address", () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startTestNats();
  });
  afterAll(async () => {
    closeClients();
    await nats?.stop();
  });

  async function readyOf(args: string[]): Promise<Record<string, unknown>> {
    const p = spawnTidemark(["ingest", "--port", "0", "--nats", nats.url, ...args], {
      env: { TIDEMARK_INGEST_TOKENS: TOKEN },
    });
    try {
      return await p.ready;
    } finally {
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    }
  }

  it("a free port with --port 0, answering Export; null with --grpc-port 0", async () => {
    const p = spawnTidemark(["ingest", "--port", "0", "--nats", nats.url], { env: { TIDEMARK_INGEST_TOKENS: TOKEN } });
    const ready = await p.ready;
    expect(ready.grpc).toMatch(/^127\.0\.0\.1:\d+$/);
    const body = ProtobufTraceSerializer.serializeRequest(await serverSpans("cli", [Date.now()])) as Uint8Array;
    expect((await unary(grpcClient(String(ready.grpc)), TRACE_EXPORT, body)).err).toBeNull();
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect((await readyOf(["--grpc-port", "0"])).grpc).toBeNull();
  });
});

describe("OTLP/gRPC over TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-grpc-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("with tlsCert/tlsKey, a TLS client is served and a plaintext one is not", async () => {
    selfSignedCert(dir);
    const fx = await startIngestFixture({ tlsCertFile: certFile, tlsKeyFile: keyFile });
    try {
      const address = fx.ingest.grpcAddress!;
      const body = ProtobufTraceSerializer.serializeRequest(await serverSpans("tls", [Date.now()])) as Uint8Array;
      const tls = new Client(address, credentials.createSsl(readFileSync(certFile)));
      const ok = await unary(tls, TRACE_EXPORT, body);
      tls.close();
      expect(ok.err).toBeNull();
      const plain = await unary(grpcClient(address), TRACE_EXPORT, body, { deadline: Date.now() + 5_000 });
      expect(plain.err?.code).toBe(status.UNAVAILABLE);
      expect((await fx.readStream()).events.filter((e) => e.service === "tls")).toHaveLength(1);
    } finally {
      closeClients();
      await fx.close();
    }
  });
});
