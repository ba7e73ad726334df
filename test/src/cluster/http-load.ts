/**
 * Bounded HTTP load against ingest on loopback: requests of `size` events with unique users
 * , each retried with the same Idempotency-Key on 429/503/unreachable, as a
 * well-behaved client does. Users are unique per load and request: `l<load>-r<request>-<i>`. Records which requests were acknowledged (2xx) and their events.
 */
import type { TelemetryEvent } from "@tidemark/engine/protocol";

export type SentEvent = Omit<TelemetryEvent, "ingest_ts">;

export interface LoadResult {
  /** Events of every acknowledged request, by request id. */
  acked: Map<string, SentEvent[]>;
  /** Attempts answered 503/429 or not answered at all. */
  retried: number;
  /** Requests given up after the retry budget. */
  abandoned: number;
}

export const LOAD_SERVICES = ["checkout", "search", "auth", "inventory", "recs", "gateway"];

function events(load: number, n: number, size: number, now: number): SentEvent[] {
  return Array.from({ length: size }, (_, i) => ({
    ts: now - ((n * 7 + i * 13) % 1000),
    service: LOAD_SERVICES[(n + i) % LOAD_SERVICES.length] ?? "x",
    route: `GET /r${i % 3}`,
    status: (n * size + i) % 23 === 0 ? 503 : 200,
    latency_ms: 5 + ((n + i) % 200),
    user: `l${load}-r${n}-${i}`,
  }));
}

export async function runLoad(opts: {
  ingest: string;
  token: string;
  durationMs: number;
  clients: number;
  size: number;
  onTick?: (elapsedMs: number) => void;
}): Promise<LoadResult> {
  const result: LoadResult = { acked: new Map(), retried: 0, abandoned: 0 };
  const start = Date.now();
  let next = 0;
  const send = async (n: number): Promise<void> => {
    const batch = events(start, n, opts.size, Date.now());
    const body = batch.map((e) => JSON.stringify(e)).join("\n") + "\n";
    const id = `load-${start}-${n}`;
    for (const giveUp = Date.now() + 30_000; Date.now() < giveUp;) {
      const res = await fetch(`${opts.ingest}/v1/events`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${opts.token}`,
          "content-type": "application/x-ndjson",
          "idempotency-key": id,
        },
        body,
      }).catch(() => undefined);
      if (res?.status === 200) {
        await res.text();
        result.acked.set(id, batch);
        return;
      }
      await res?.text();
      result.retried++;
      const after = Number(res?.headers.get("retry-after") ?? "0.2");
      await new Promise((r) => setTimeout(r, Math.min(Math.max(after, 0.1), 2) * 1000));
    }
    result.abandoned++;
  };
  const client = async (): Promise<void> => {
    while (Date.now() - start < opts.durationMs) {
      opts.onTick?.(Date.now() - start);
      await send(next++);
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, client));
  return result;
}
