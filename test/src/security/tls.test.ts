/**
 * TLS from certificate and key files for ingest HTTP and the dashboard (docs/security.md, "TLS"),
 * with a self-signed certificate made here by openssl; and the dashboard page's security headers.
 * Real HTTPS, a real WebSocket over TLS, a real nats-server.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { resolveConfig, startDashboard } from "@tidemark/dashboard";
import { defineIngestConfig, startIngest } from "@tidemark/ingest";
import { startTestNats, type TestNats } from "../index.js";
import { selfSignedCert } from "../harness/self-signed.js";
import { readEventsStream } from "../ingest/ingest-fixture.js";
import { connect } from "@nats-io/transport-node";

const TOKEN = "tls-test-token-0123";

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function httpsRequest(
  url: string,
  ca: Buffer | undefined,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers, ca }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

describe("TLS", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-tls-"));
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  let cert: Buffer;
  let nats: TestNats;

  beforeAll(async () => {
    selfSignedCert(dir);
    cert = readFileSync(certFile);
    nats = await startTestNats();
  });
  afterAll(async () => {
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves ingest over HTTPS from the configured files, and stores what it accepts", async () => {
    const ingest = await startIngest(
      defineIngestConfig({
        port: 0,
        natsUrl: nats.url,
        tokens: [TOKEN],
        logLevel: "silent",
        tlsCertFile: certFile,
        tlsKeyFile: keyFile,
      }),
    );
    try {
      expect(ingest.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const res = await httpsRequest(`${ingest.url}/v1/events`, cert, {
        method: "POST",
        body: JSON.stringify({ service: "tls-svc" }),
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-ndjson" },
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ accepted: 1 });
      // Not trusted without the certificate; not served as plain HTTP.
      await expect(httpsRequest(`${ingest.url}/healthz`, undefined)).rejects.toThrow(/self-signed|self signed/);
      await expect(fetch(ingest.url.replace("https:", "http:") + "/healthz")).rejects.toThrow();
      const nc = await connect({ servers: nats.url, noAsyncTraces: true });
      const stored = (await readEventsStream(nc)).events.filter((e) => e.service === "tls-svc");
      await nc.close();
      expect(stored).toHaveLength(1);
    } finally {
      await ingest.close();
    }
  });

  it("serves the dashboard page and WebSocket over TLS, the page with its security headers", async () => {
    const dash = await startDashboard(
      resolveConfig({
        port: 0,
        nats: nats.url,
        logLevel: "warn",
        retryMs: "100ms",
        tlsCertFile: certFile,
        tlsKeyFile: keyFile,
        readToken: TOKEN,
      }),
    );
    try {
      expect(dash.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const page = await httpsRequest(`${dash.url}/`, cert);
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toMatch(/^text\/html/);
      expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(page.headers["x-frame-options"]).toBe("DENY");
      expect(page.headers["x-content-type-options"]).toBe("nosniff");
      const api = await httpsRequest(`${dash.url}/api/status`, cert, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(api.status).toBe(200);
      expect(api.headers["x-content-type-options"]).toBe("nosniff");
      const ws = new WebSocket(`${dash.url.replace("https:", "wss:")}/ws`, ["tidemark", `tidemark.token.${TOKEN}`], {
        ca: cert,
      });
      const hello = await new Promise<string>((resolve, reject) => {
        ws.once("error", reject);
        ws.once("message", (d: Buffer) => resolve(d.toString("utf8")));
      });
      expect(JSON.parse(hello)).toMatchObject({ type: "hello" });
      ws.close();
    } finally {
      await dash.close();
    }
  });
});
