/**
 * `tidemark load`'s HTTP client for `POST /v1/events`: one keep-alive connection per sender
 * (node:http with a keep-alive Agent; an answer is read whole before the socket is reused). An
 * attempt that gets no answer — refused, reset, or silent past the timeout — rejects.
 */
import http from "node:http";
import https from "node:https";

export interface HttpAnswer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

export class IngestClient {
  private readonly url: URL;
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;

  constructor(
    ingest: string,
    private readonly token: string | undefined,
    connections: number,
    private readonly timeoutMs = 30_000,
  ) {
    this.url = new URL("/v1/events", ingest);
    const secure = this.url.protocol === "https:";
    const options = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections };
    this.agent = secure ? new https.Agent(options) : new http.Agent(options);
    this.request = secure ? https.request : http.request;
  }

  /** Posts one NDJSON body with its Idempotency-Key; resolves with the answer, rejects without one. */
  post(body: string, key: string): Promise<HttpAnswer> {
    const headers: http.OutgoingHttpHeaders = {
      "content-type": "application/x-ndjson",
      "content-length": Buffer.byteLength(body),
      "idempotency-key": key,
    };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = this.request(this.url, { method: "POST", agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const retryAfter = res.headers["retry-after"];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            body: Buffer.concat(chunks).toString("utf8"),
          });
        });
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  /** Closes every connection; attempts still waiting reject. */
  close(): void {
    this.agent.destroy();
  }
}

/** What an attempt without an answer says, for the log: ECONNREFUSED, a timeout, … */
export function causeOf(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}
