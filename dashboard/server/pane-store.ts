import type { Pane } from "@tidemark/engine/protocol";
import type { MetricName, PanelSubscription } from "../protocol/ws-frames.js";

/** One stored pane: the latest (highest seq) emission of its id, with its JSON. */
export interface StoredPane {
  /** Never changed once stored: its JSON is written from it. */
  readonly pane: Pane;
  /**
   * The pane's JSON, what the JSON path of TM_PANES held: the body's line (NDJSON), or for a binary
   * body written from the decoded pane the first time it is asked for, then kept, so WebSocket
   * frames and REST splice it in and a pane never sent is never stringified
   * (docs/decisions/0047-binary-panes.md, Decision 3).
   */
  readonly json: string;
  /** Store revision at which this version was stored. */
  readonly rev: number;
}

class StoredVersion implements StoredPane {
  constructor(
    readonly pane: Pane,
    private text: string | undefined,
    readonly rev: number,
  ) {}

  get json(): string {
    return (this.text ??= JSON.stringify(this.pane));
  }
}

/** The windows kept for one (policy, key, window size), ordered by window start. */
interface Series {
  readonly entries: StoredPane[];
}

/**
 * Latest pane per id plus a bounded history per series, idempotent on (id, seq): a replayed or
 * out-of-order older seq never overwrites a newer one (docs/websocket-protocol.md,
 * "What the server holds").
 */
export class PaneStore {
  private readonly byId = new Map<string, StoredPane>();
  private readonly series = new Map<string, Series>();
  private revision = 0;
  private readonly observers: Array<(pane: Pane) => void> = [];

  /**
   * @param maxWindowsPerSeries windows kept per series
   * @param maxPanes panes kept in all; past it the oldest windows (by start) are forgotten,
   *   a tenth of the cap at a time, so many routes cannot grow the store without bound
   */
  constructor(
    private readonly maxWindowsPerSeries: number,
    private readonly maxPanes = Number.MAX_SAFE_INTEGER,
  ) {}

  get rev(): number {
    return this.revision;
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): StoredPane | undefined {
    return this.byId.get(id);
  }

  /** Calls `fn` with every pane offered to the store, before its own rules (the Prometheus series keep theirs). */
  observe(fn: (pane: Pane) => void): void {
    this.observers.push(fn);
  }

  /**
   * Stores the pane unless a pane of the same id with this seq or a later one is held. `json` is
   * its text when the body held it; without, it is written from `pane` when first asked for.
   */
  upsert(pane: Pane, json?: string): StoredPane | undefined {
    for (const fn of this.observers) fn(pane);
    const held = this.byId.get(pane.id);
    if (held && held.pane.seq >= pane.seq) return undefined;
    const series = this.seriesOf(pane);
    const entries = series.entries;
    const at = lowerBound(entries, pane.window.start);
    if (!held && entries.length >= this.maxWindowsPerSeries && at === 0) return undefined;
    const stored = new StoredVersion(pane, json, ++this.revision);
    if (held) entries[at] = stored;
    else {
      entries.splice(at, 0, stored);
      if (entries.length > this.maxWindowsPerSeries) this.byId.delete(entries.shift()?.pane.id ?? "");
    }
    this.byId.set(pane.id, stored);
    if (this.byId.size > this.maxPanes) this.trim(Math.floor(this.maxPanes * 0.9));
    return stored;
  }

  /** Forgets the oldest windows across all series until `keep` panes remain. */
  private trim(keep: number): void {
    const starts: number[] = [];
    for (const s of this.series.values()) for (const e of s.entries) starts.push(e.pane.window.start);
    starts.sort((a, b) => a - b);
    const cutoff = starts[starts.length - keep] ?? -Infinity;
    for (const [key, s] of this.series) {
      let n = 0;
      while (n < s.entries.length && (s.entries[n]?.pane.window.start ?? Infinity) < cutoff)
        this.byId.delete(s.entries[n++]?.pane.id ?? "");
      if (n > 0) s.entries.splice(0, n);
      if (s.entries.length === 0) this.series.delete(key);
    }
  }

  /** Stored panes matching the filter with rev > sinceRev, oldest window first. */
  select(filter: PaneFilter, sinceRev = 0): StoredPane[] {
    const out: StoredPane[] = [];
    for (const s of this.series.values()) {
      const first = s.entries[0];
      if (!first || !matchesSeries(first.pane, filter)) continue;
      for (const e of s.entries) if (e.rev > sinceRev && e.pane.window.end >= (filter.from ?? 0)) out.push(e);
    }
    return out;
  }

  /** Every policy seen, with its newest on-time (else any) pane: the frontier's fallback. */
  newestPerPolicy(): Map<string, Pane> {
    const out = new Map<string, Pane>();
    for (const s of this.series.values()) {
      for (let i = s.entries.length - 1; i >= 0; i--) {
        const p = s.entries[i]?.pane;
        if (!p || p.kind === "early" || p.kind === "retract" || p.key.user !== undefined) continue;
        const best = out.get(p.policy);
        if (!best || best.window.end < p.window.end) out.set(p.policy, p);
        break;
      }
    }
    return out;
  }

  private seriesOf(pane: Pane): Series {
    // The id is `<policy>|<key>|<windowSize>|<start>`: without its start it names the series.
    const key = pane.id.slice(0, pane.id.lastIndexOf("|"));
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { entries: [] }));
    return s;
  }
}

export type PaneFilter = Pick<PanelSubscription, "policy" | "windowMs" | "services" | "route" | "from"> & {
  metric?: MetricName;
};

/** True when a pane belongs to the series a filter selects (time range aside). */
export function matchesSeries(p: Pane, f: PaneFilter): boolean {
  if (p.policy !== f.policy || p.window.end - p.window.start !== f.windowMs) return false;
  // Session panes (they have a key.user) only for `sessions` panels, and only for them.
  if ((p.key.user !== undefined) !== (f.metric === "sessions")) return false;
  if ((p.key.route ?? undefined) !== (f.route ?? undefined)) return false;
  return !f.services || f.services.length === 0 || f.services.includes(p.key.service);
}

export function matches(p: Pane, f: PaneFilter): boolean {
  return matchesSeries(p, f) && p.window.end >= (f.from ?? 0);
}

/** First index whose window starts at or after `start`. */
function lowerBound(entries: readonly StoredPane[], start: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((entries[mid]?.pane.window.start ?? 0) < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
