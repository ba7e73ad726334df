/** One remote-write request over HTTP (docs/remote-write.md, "Wire"). */
import { REMOTE_WRITE_HEADERS } from "./write-request.js";
import { parseRetryAfter } from "./retry-policy.js";

export interface Answer {
  /** HTTP status; undefined when there was no answer. */
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** The answer's body (at most 512 characters) or the network error, for the logs. */
  readonly detail: string;
}

export async function postWriteRequest(
  url: string,
  body: Uint8Array,
  opts: { timeoutMs: number; bearerToken: string | null },
): Promise<Answer> {
  const headers: Record<string, string> = { ...REMOTE_WRITE_HEADERS, "user-agent": "tidemark-remote-write" };
  if (opts.bearerToken !== null) headers["authorization"] = `Bearer ${opts.bearerToken}`;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const text = await res.text().catch(() => "");
    return {
      status: res.status,
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), Date.now()),
      detail: text.slice(0, 512).trim(),
    };
  } catch (err) {
    const e = err as Error & { cause?: { message?: string } };
    return { status: undefined, retryAfterMs: undefined, detail: e.cause?.message ?? e.message };
  }
}
