/**
 * Test oracle, independent of the engine: session cells by brute force over accepted events — per
 * (service, user) the events by time, cut where two are `gap` or more apart (or in different
 * length-cap periods), each session counted in the tumbling window of `windowMs` holding its end
 * (last event + gap), per service (docs/semantics.md, "Session windows").
 */
export interface SessionEvent {
  ts: number;
  service: string;
  user: string;
  status: number;
}

export interface OfflineCell {
  /** Sessions ending in the window. */
  count: number;
  /** Of them, sessions with a failed event (status ≥ 500). */
  errors: number;
  events: number;
  /** Their durations (last − first event time), ascending once all are in. */
  durations: number[];
}

/** "<service>|<window start>" → its cell. */
export function sessionCells(
  events: Iterable<SessionEvent>,
  gapMs: number,
  windowMs: number,
  capMs = 4 * 3_600_000,
): Map<string, OfflineCell> {
  const byKey = new Map<string, SessionEvent[]>();
  for (const e of events) {
    if (e.user === "") continue;
    const k = JSON.stringify([e.service, e.user]);
    const list = byKey.get(k);
    if (list) list.push(e);
    else byKey.set(k, [e]);
  }
  const cells = new Map<string, OfflineCell>();
  const close = (session: SessionEvent[]): void => {
    const first = session[0] as SessionEvent;
    const end = (session[session.length - 1] as SessionEvent).ts + gapMs;
    const key = `${first.service}|${Math.floor(end / windowMs) * windowMs}`;
    const c = cells.get(key) ?? { count: 0, errors: 0, events: 0, durations: [] };
    c.count++;
    if (session.some((e) => e.status >= 500)) c.errors++;
    c.events += session.length;
    c.durations.push(end - gapMs - first.ts);
    cells.set(key, c);
  };
  for (const list of byKey.values()) {
    list.sort((a, b) => a.ts - b.ts);
    let from = 0;
    for (let i = 1; i <= list.length; i++) {
      const prev = list[i - 1] as SessionEvent;
      const next = list[i];
      if (next && next.ts - prev.ts < gapMs && Math.floor(next.ts / capMs) === Math.floor(prev.ts / capMs)) continue;
      close(list.slice(from, i));
      from = i;
    }
  }
  for (const c of cells.values()) c.durations.sort((a, b) => a - b);
  return cells;
}
