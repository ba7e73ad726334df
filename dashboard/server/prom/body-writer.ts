/**
 * A response body written straight into bytes: a range result is millions of short pieces, and
 * joining them as strings costs more than evaluating the query (docs/prometheus-api.md, "Sizing").
 */
import { QueryLimitError } from "../promql/index.js";

/** The error of a response body past its limit. */
export function responseTooLarge(maxBytes: number): QueryLimitError {
  return new QueryLimitError(
    "response_bytes",
    `the response would be larger than ${maxBytes} bytes: query fewer series, a larger step or a shorter range`,
  );
}

export class BodyWriter {
  /** The buffer and the bytes written so far: a writer of its own may fill buf[n…] after room(). */
  buf: Buffer;
  n = 0;

  /**
   * @param sizeHint expected bytes (the writer grows past it)
   * @param maxBytes past this many bytes room() throws a "response_bytes" limit (docs/prometheus-api.md, "Query limits")
   */
  constructor(
    sizeHint = 1024,
    private readonly maxBytes = Infinity,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(64, Math.min(sizeHint, maxBytes)));
  }

  /** A string of ASCII characters only (punctuation, formatted numbers). */
  ascii(s: string): void {
    this.room(s.length);
    const buf = this.buf;
    if (s.length > 32) {
      this.n += buf.write(s, this.n, "latin1");
      return;
    }
    let n = this.n;
    for (let i = 0; i < s.length; i++) buf[n++] = s.charCodeAt(i);
    this.n = n;
  }

  /** Any string, as UTF-8. */
  text(s: string): void {
    this.room(Buffer.byteLength(s));
    this.n += this.buf.write(s, this.n, "utf8");
  }

  /** The bytes written (a view of the writer's buffer). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.n);
  }

  /** Makes room for k more bytes (buf may be replaced). */
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    if (this.n + k > this.maxBytes) throw responseTooLarge(this.maxBytes);
    const grown = Buffer.allocUnsafe(Math.min(Math.max(this.buf.length * 2, this.n + k), this.maxBytes));
    this.buf.copy(grown, 0, 0, this.n);
    this.buf = grown;
  }
}
