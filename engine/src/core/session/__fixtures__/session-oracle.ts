/**
 * Test support, independent of the operator: an offline sessionizer over complete data, the cells an
 * independent consumer computes from its sessions, and the table a pane consumer keeps (the last
 * pane per id; deltas summed in discarding).
 */
import type { Pane, TelemetryEvent } from "../../../protocol.js";
import type { AccumulationMode } from "../../types.js";

export interface Final {
  service: string;
  user: string;
  start: number;
  end: number;
  count: number;
  errors: number;
  durationMs: number;
  firstRoute: string;
  lastRoute: string;
}

function byRoute(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortFinals(list: Final[]): Final[] {
  const key = (s: Final): string => `${s.service}\u0000${s.user}`;
  return list.sort((a, b) => byRoute(key(a), key(b)) || a.start - b.start);
}

/** Per (service, user), events by ts, cut where two are >= gap apart or in different cap periods. */
export function bruteForce(events: readonly TelemetryEvent[], gap: number, cap: number): Final[] {
  const byKey = new Map<string, TelemetryEvent[]>();
  for (const e of events) {
    if (e.user === "") continue;
    const k = JSON.stringify([e.service, e.user]);
    const list = byKey.get(k);
    if (list) list.push(e);
    else byKey.set(k, [e]);
  }
  const out: Final[] = [];
  for (const list of byKey.values()) {
    const sorted = [...list].sort((a, b) => a.ts - b.ts || byRoute(a.route, b.route));
    let cur: TelemetryEvent[] = [];
    const flush = (): void => {
      const first = cur[0] as TelemetryEvent;
      const lastTs = (cur[cur.length - 1] as TelemetryEvent).ts;
      const atLast = cur
        .filter((e) => e.ts === lastTs)
        .map((e) => e.route)
        .sort(byRoute);
      out.push({
        service: first.service,
        user: first.user,
        start: first.ts,
        end: lastTs + gap,
        count: cur.length,
        errors: cur.filter((e) => e.status >= 500).length,
        durationMs: lastTs - first.ts,
        firstRoute: first.route,
        lastRoute: atLast[0] as string,
      });
      cur = [];
    };
    for (const e of sorted) {
      const prev = cur[cur.length - 1];
      if (prev && (e.ts - prev.ts >= gap || Math.floor(e.ts / cap) !== Math.floor(prev.ts / cap))) flush();
      cur.push(e);
    }
    flush();
  }
  return sortFinals(out);
}

/** One session cell as an independent consumer computes it: sessions ending in the window. */
export interface OfflineCell {
  service: string;
  start: number;
  count: number;
  /** Sessions with at least one failed event. */
  errors: number;
  events: number;
  /** Durations of its sessions, ascending. */
  durations: number[];
}

/** Sessions per (service, tumbling window of `sizeMs` holding the session's end), sorted by service then start. */
export function offlineCells(sessions: readonly Final[], sizeMs: number): OfflineCell[] {
  const cells = new Map<string, OfflineCell>();
  for (const s of sessions) {
    const start = Math.floor(s.end / sizeMs) * sizeMs;
    const key = JSON.stringify([s.service, start]);
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { service: s.service, start, count: 0, errors: 0, events: 0, durations: [] }));
    c.count++;
    if (s.errors > 0) c.errors++;
    c.events += s.count;
    c.durations.push(s.durationMs);
  }
  for (const c of cells.values()) c.durations.sort((a, b) => a - b);
  return [...cells.values()].sort((a, b) => byRoute(a.service, b.service) || a.start - b.start);
}

/** What a downstream table keyed by pane id holds at the end: the last pane's value, or the sum of deltas (discarding). */
export interface HeldCell {
  service: string;
  sizeMs: number;
  start: number;
  count: number;
  errors: number;
  events: number;
  p50: number;
  p99: number;
  kind: Pane["kind"];
}

export function heldCells(panes: readonly Pane[], mode: AccumulationMode): HeldCell[] {
  const table = new Map<string, HeldCell>();
  for (const p of panes) {
    if (p.kind === "retract") continue;
    const old = table.get(p.id);
    const add = mode === "discarding" && old !== undefined;
    const events = (p.sessions as NonNullable<Pane["sessions"]>).events;
    table.set(p.id, {
      service: p.key.service,
      sizeMs: p.window.end - p.window.start,
      start: p.window.start,
      count: p.value.count + (add ? old.count : 0),
      errors: p.value.errors + (add ? old.errors : 0),
      events: events + (add ? old.events : 0),
      p50: p.value.p50,
      p99: p.value.p99,
      kind: p.kind,
    });
  }
  return [...table.values()].sort((a, b) => a.sizeMs - b.sizeMs || byRoute(a.service, b.service) || a.start - b.start);
}
