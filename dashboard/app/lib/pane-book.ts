import type { Pane } from "@tidemark/engine/protocol";
import { isAllServices } from "../../protocol/all-services.js";
import type { PaneEnvelope, ResumeCursor } from "../../protocol/ws-frames.js";

/** One service's points for a panel: window start → value, and whether it is provisional. */
export interface SeriesPoint {
  t: number;
  pane: Pane;
}

export interface PanelFilter {
  policy: string;
  windowMs: number;
  services: readonly string[];
  /** True: the session panes (they have a key.user); else window panes. */
  sessions?: boolean;
}

/**
 * The browser's copy of the panes: latest per id, idempotent on (id, seq) like the server's
 * store, so a replayed or resumed pane never doubles a value and an early value is replaced in
 * place by the on-time and late panes of its window.
 */
export class PaneBook {
  private readonly panes = new Map<string, Pane>();
  private epoch: string | null = null;
  private rev = 0;

  get size(): number {
    return this.panes.size;
  }

  /** Where to resume after a reconnect. */
  cursor(): ResumeCursor | undefined {
    return this.epoch === null ? undefined : { epoch: this.epoch, rev: this.rev };
  }

  /** A new server epoch means the server restarted: what we hold stays until its snapshot resets it. */
  hello(epoch: string): void {
    if (epoch !== this.epoch) this.rev = 0;
    this.epoch = epoch;
  }

  /** Drops panes of the given filters before a full (reset) snapshot of them. */
  reset(filters: readonly PanelFilter[]): void {
    for (const [id, p] of this.panes) if (filters.some((f) => matchesFilter(p, f))) this.panes.delete(id);
  }

  /** A snapshot is complete up to `rev`: resume from there. */
  noteRev(rev: number): void {
    if (rev > this.rev) this.rev = rev;
  }

  /** Applies envelopes; returns how many changed what is shown. */
  apply(envelopes: readonly PaneEnvelope[]): number {
    let changed = 0;
    for (const { rev, pane } of envelopes) {
      if (rev > this.rev) this.rev = rev;
      if (this.upsert(pane)) changed++;
    }
    return changed;
  }

  upsert(pane: Pane): boolean {
    const held = this.panes.get(pane.id);
    if (held && held.seq >= pane.seq) return false;
    this.panes.set(pane.id, pane);
    return true;
  }

  /** Forgets panes of windows that ended before `before` (out of the view): the page stays bounded over days. */
  prune(before: number): number {
    let n = 0;
    for (const [id, p] of this.panes) {
      if (p.window.end >= before) continue;
      this.panes.delete(id);
      n++;
    }
    return n;
  }

  /** The panes of a panel grouped by service, each series ordered by window start; never the all-services ("*") panes. */
  series(f: PanelFilter, from: number, to: number): Map<string, SeriesPoint[]> {
    const out = new Map<string, SeriesPoint[]>();
    for (const p of this.panes.values()) {
      if (!matchesFilter(p, f) || p.window.end < from || p.window.start > to || isAllServices(p.key.service)) continue;
      let s = out.get(p.key.service);
      if (!s) out.set(p.key.service, (s = []));
      s.push({ t: p.window.start, pane: p });
    }
    for (const s of out.values()) s.sort((a, b) => a.t - b.t);
    return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
  }

  /**
   * The engine's all-services ("*") panes of the panel's policy, window size and kind, ordered by
   * window start, whatever services the panel selects: an "All services" headline reads them.
   */
  allServices(f: PanelFilter, from: number, to: number): SeriesPoint[] {
    const all = { ...f, services: [] };
    const out: SeriesPoint[] = [];
    for (const p of this.panes.values())
      if (isAllServices(p.key.service) && matchesFilter(p, all) && p.window.end >= from && p.window.start <= to)
        out.push({ t: p.window.start, pane: p });
    return out.sort((a, b) => a.t - b.t);
  }

  /** Every service seen, for the service picker; "*" (all services) is none of them. */
  services(): string[] {
    return [...new Set([...this.panes.values()].map((p) => p.key.service))].filter((s) => !isAllServices(s)).sort();
  }

  /** Every policy seen in panes. */
  policies(): string[] {
    return [...new Set([...this.panes.values()].map((p) => p.policy))].sort();
  }
}

export function matchesFilter(p: Pane, f: PanelFilter): boolean {
  return (
    p.policy === f.policy &&
    p.key.route === undefined &&
    (p.key.user !== undefined) === (f.sessions === true) &&
    p.window.end - p.window.start === f.windowMs &&
    (f.services.length === 0 || f.services.includes(p.key.service))
  );
}
