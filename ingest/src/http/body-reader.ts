/**
 * Reads a request body into one Buffer with every limit applied while reading: the body limit
 * (after decompression — a gzip bomb stops at the limit with 413), the in-flight budget (429),
 * and gzip errors (400). Never buffers more than the limit.
 */
import type { Readable } from "node:stream";
import { gunzip } from "node:zlib";
import { IngestError } from "../errors.js";
import type { InFlightBudget } from "./in-flight-budget.js";

export interface BodyLimits {
  readonly maxBodyBytes: number;
  /** A body that sends nothing for this long is refused with 408 (0: no limit). */
  readonly bodyIdleMs: number;
  readonly budget: InFlightBudget;
  /** Called with each amount taken from the budget, so the caller can release it at the end. */
  readonly onTake: (bytes: number) => void;
}

function tooLarge(limit: number): IngestError {
  return new IngestError(
    "TM_INGEST_BODY_TOO_LARGE",
    `body exceeds ${limit} bytes (after decompression): split it into smaller requests`,
  );
}

/** Takes `n` bytes from the in-flight budget, or throws TM_INGEST_OVERLOADED (429). */
export function take(n: number, limits: BodyLimits): void {
  if (!limits.budget.take(n))
    throw new IngestError(
      "TM_INGEST_OVERLOADED",
      "ingest holds too many request bytes in flight: retry after the Retry-After delay",
    );
  limits.onTake(n);
}

/**
 * Reads the whole body, applying the limits chunk by chunk. A refusal stops reading without
 * destroying the socket, so the answer (413, 408, 429) still reaches the client; the route
 * then closes the connection.
 */
function readRaw(stream: Readable, limits: BodyLimits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let idle: NodeJS.Timeout | undefined;
    const stop = (err?: IngestError): void => {
      clearTimeout(idle);
      stream.off("data", onData).off("end", onEnd).off("error", onError);
      if (!err) return resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
      stream.pause();
      reject(err);
    };
    const arm = (): void => {
      if (limits.bodyIdleMs <= 0) return;
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          stop(
            new IngestError(
              "TM_INGEST_BODY_TIMEOUT",
              `the request body sent nothing for ${limits.bodyIdleMs} ms (bodyIdleTimeout): nothing was stored; send it again`,
            ),
          ),
        limits.bodyIdleMs,
      );
    };
    const onData = (chunk: Buffer): void => {
      arm();
      size += chunk.length;
      if (size > limits.maxBodyBytes) return stop(tooLarge(limits.maxBodyBytes));
      try {
        take(chunk.length, limits);
      } catch (err) {
        return stop(err as IngestError);
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => stop();
    const onError = (err: Error): void =>
      stop(
        new IngestError(
          "TM_INGEST_BODY_ABORTED",
          `the request body ended early (${err.message}): nothing was stored; send it again`,
        ),
      );
    stream.on("data", onData).on("end", onEnd).on("error", onError);
    arm();
  });
}

function gunzipLimited(input: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gunzip(input, { maxOutputLength: limit }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return reject(tooLarge(limit));
      reject(
        new IngestError(
          "TM_INGEST_BAD_GZIP",
          `body is not valid gzip (${err.message}): send the complete gzip stream or drop Content-Encoding`,
        ),
      );
    });
  });
}

/** The decoded body. `encoding` is the Content-Encoding header (identity or gzip). */
export async function readBody(stream: Readable, encoding: string | undefined, limits: BodyLimits): Promise<Buffer> {
  const enc = (encoding ?? "identity").trim().toLowerCase();
  if (enc !== "identity" && enc !== "gzip" && enc !== "x-gzip" && enc !== "")
    throw new IngestError(
      "TM_INGEST_UNSUPPORTED_ENCODING",
      `Content-Encoding "${encoding}" is not supported: send gzip or identity`,
    );
  const raw = await readRaw(stream, limits);
  if (enc !== "gzip" && enc !== "x-gzip") return raw;
  const out = await gunzipLimited(raw, limits.maxBodyBytes);
  take(out.length, limits);
  return out;
}
