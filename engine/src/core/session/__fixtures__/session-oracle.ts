/**
 * Test support, independent of the operator: an offline sessionizer over complete data, and the
 * downstream upsert table a pane consumer keeps (retractions applied; deltas summed in discarding).
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

/** A downstream table keyed by pane id: a retract deletes the id, other panes set it (or add, discarding). */
export function upsertTable(panes: readonly Pane[], mode: AccumulationMode): Final[] {
  const table = new Map<string, Final>();
  for (const p of panes) {
    if (p.kind === "retract") {
      table.delete(p.id);
      continue;
    }
    const old = table.get(p.id);
    const add = mode === "discarding" && old !== undefined;
    const s = p.session as NonNullable<Pane["session"]>;
    table.set(p.id, {
      service: p.key.service,
      user: p.key.user as string,
      start: p.window.start,
      end: p.window.end,
      count: p.value.count + (add ? old.count : 0),
      errors: p.value.errors + (add ? old.errors : 0),
      durationMs: s.durationMs,
      firstRoute: s.firstRoute,
      lastRoute: s.lastRoute,
    });
  }
  return sortFinals([...table.values()]);
}
