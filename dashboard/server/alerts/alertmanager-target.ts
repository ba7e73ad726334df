/**
 * One Alertmanager (API v2, `POST <url>/api/v2/alerts`): a bounded queue holding the newest state
 * of each alert not yet delivered, sent in batches; retried with backoff while the Alertmanager is
 * down or failing, never blocking the caller (docs/operations.md, "Alerts").
 */

/** The body Alertmanager's API v2 takes, one per alert. */
export interface PostableAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL: string;
}

/** Sends a body; resolves with the HTTP status, rejects when there was no answer. */
export type Post = (url: string, body: string) => Promise<number>;

export interface TargetCounters {
  sent(alerts: number): void;
  failed(reason: string): void;
  dropped(alerts: number): void;
  queued(length: number): void;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Alerts per request (Prometheus's notifier sends at most 64). */
export const BATCH = 64;
export const FIRST_RETRY_MS = 500;

/** The wait before the next try after a failure: 0.5 s, doubling, at most `maxMs`. */
export function nextBackoff(previousMs: number, maxMs: number): number {
  return Math.min(maxMs, previousMs === 0 ? FIRST_RETRY_MS : previousMs * 2);
}

export class AlertmanagerTarget {
  private pending = new Map<string, PostableAlert>();
  private sending = false;
  private timer: unknown;
  private backoffMs = 0;
  private closed = false;

  constructor(
    readonly url: string,
    private readonly opts: { readonly queueSize: number; readonly maxBackoffMs: number },
    private readonly post: Post,
    private readonly counters: TargetCounters,
    private readonly timers: Timers,
  ) {}

  /** Alerts waiting. */
  get length(): number {
    return this.pending.size;
  }

  /** Current wait between tries, ms (0 while the Alertmanager answers). */
  get backoff(): number {
    return this.backoffMs;
  }

  /** Queues the newest state of each alert (by fingerprint) and sends when it may. */
  offer(alerts: ReadonlyArray<readonly [string, PostableAlert]>): void {
    if (this.closed) return;
    for (const [fp, a] of alerts) {
      this.pending.delete(fp);
      this.pending.set(fp, a);
    }
    this.trim();
    this.schedule(0);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.sending || this.timer !== undefined || this.closed || this.pending.size === 0) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.send();
    }, ms);
  }

  private async send(): Promise<void> {
    const batch = [...this.pending].slice(0, BATCH);
    for (const [fp] of batch) this.pending.delete(fp);
    this.sending = true;
    let retry = false;
    try {
      const status = await this.post(`${this.url}/api/v2/alerts`, JSON.stringify(batch.map(([, a]) => a)));
      if (status >= 200 && status < 300) {
        this.counters.sent(batch.length);
        this.backoffMs = 0;
      } else if (status >= 400 && status < 500) {
        // The Alertmanager refuses these alerts: sending them again would be refused again.
        this.counters.failed(`HTTP ${status}: refused ${batch.length} alerts`);
      } else {
        this.counters.failed(`HTTP ${status}`);
        retry = true;
      }
    } catch (err) {
      this.counters.failed((err as Error).message);
      retry = true;
    }
    this.sending = false;
    if (retry) {
      // Back in front, unless a newer state of the same alert came meanwhile.
      this.pending = new Map([...batch.filter(([fp]) => !this.pending.has(fp)), ...this.pending]);
      this.trim();
      this.backoffMs = nextBackoff(this.backoffMs, this.opts.maxBackoffMs);
    }
    this.counters.queued(this.pending.size);
    this.schedule(this.backoffMs);
  }

  /** Past queueSize, the oldest waiting alerts go (counted). */
  private trim(): void {
    let dropped = 0;
    for (const fp of this.pending.keys()) {
      if (this.pending.size <= this.opts.queueSize) break;
      this.pending.delete(fp);
      dropped++;
    }
    if (dropped > 0) this.counters.dropped(dropped);
    this.counters.queued(this.pending.size);
  }
}
