/**
 * Test oracle, independent of the operator: each policy sessionizes on its own, with plain lists,
 * exactly as docs/semantics.md ("Session windows") states the rules — at every input, log time
 * moves, each policy closes the sessions with end + grace ≤ W (keeping the key's bound), then judges
 * the event against its own sessions. It also notes, when a policy's W first reaches a window's end,
 * what that window's on-time pane must show: its sessions ending there, as they stand then.
 */
import type { TelemetryEvent } from "../../../protocol.js";
import type { PolicyConfig } from "../../types.js";
import type { Step } from "./arrival-steps.js";
import type { Final } from "./session-oracle.js";

interface Open {
  service: string;
  user: string;
  first: number;
  last: number;
  count: number;
  errors: number;
}

export interface NaiveResult {
  /** Per policy: every session it ever held, as it ended. */
  finals: Final[][];
  /** Per policy: the events it dropped. */
  dropped: TelemetryEvent[][];
  /** Per policy: "<sizeMs>|<service>|<start>" → sessions ending there at the moment W reached the window's end. */
  onTime: Map<string, number>[];
}

function toFinal(s: Open, gap: number): Final {
  return {
    service: s.service,
    user: s.user,
    start: s.first,
    end: s.last + gap,
    count: s.count,
    errors: s.errors,
    durationMs: s.last - s.first,
    firstRoute: "",
    lastRoute: "",
  };
}

export function naiveSessions(
  steps: readonly Step[],
  policies: readonly PolicyConfig[],
  gap: number,
  cap: number,
  sizes: readonly number[],
): NaiveResult {
  const lag = (p: PolicyConfig): number => (p.watermark as { lagMs: number }).lagMs;
  const open: Open[][] = policies.map(() => []);
  const closed: Map<string, number>[] = policies.map(() => new Map());
  const result: NaiveResult = {
    finals: policies.map(() => []),
    dropped: policies.map(() => []),
    onTime: policies.map(() => new Map()),
  };
  let logTime = -Infinity;
  const lastW = policies.map(() => -Infinity);
  const keyOf = (s: { service: string; user: string }): string => JSON.stringify([s.service, s.user]);
  const advance = (t: number): void => {
    logTime = Math.max(logTime, t);
    policies.forEach((p, i) => {
      const w = logTime - lag(p);
      notice(i, lastW[i] as number, w);
      lastW[i] = w;
      const keep: Open[] = [];
      for (const s of open[i] as Open[]) {
        if (s.last + gap + p.graceMs <= w) {
          (result.finals[i] as Final[]).push(toFinal(s, gap));
          const k = keyOf(s);
          (closed[i] as Map<string, number>).set(
            k,
            Math.max((closed[i] as Map<string, number>).get(k) ?? -Infinity, s.last),
          );
        } else keep.push(s);
      }
      open[i] = keep;
    });
  };
  // Window ends W passed since the last input: the sessions of each such window as they stand now.
  const notice = (i: number, from: number, to: number): void => {
    for (const size of sizes)
      for (let end = Math.floor(from / size) * size + size; end <= to; end += size) {
        if (!Number.isFinite(end)) break;
        const all = [...(open[i] as Open[]).map((s) => toFinal(s, gap)), ...(result.finals[i] as Final[])];
        for (const s of all)
          if (s.end >= end - size && s.end < end) {
            const key = `${size}|${s.service}|${end - size}`;
            result.onTime[i]?.set(key, (result.onTime[i]?.get(key) ?? 0) + 1);
          }
      }
  };
  for (const step of steps) {
    if (typeof step === "number") {
      advance(step);
      continue;
    }
    const e = step;
    advance(e.ingest_ts);
    if (e.user === "") continue;
    policies.forEach((p, i) => place(i, p, e));
  }
  policies.forEach((_, i) => {
    for (const s of open[i] as Open[]) (result.finals[i] as Final[]).push(toFinal(s, gap));
  });
  return result;

  function place(i: number, p: PolicyConfig, e: TelemetryEvent): void {
    const w = logTime - lag(p);
    const period = Math.floor(e.ts / cap);
    const mine = (open[i] as Open[]).filter((s) => s.service === e.service && s.user === e.user);
    const touched = mine.filter(
      (s) => Math.floor(s.first / cap) === period && s.first - gap < e.ts && e.ts < s.last + gap,
    );
    const last = Math.max(e.ts, ...touched.map((s) => s.last));
    const bound = (closed[i] as Map<string, number>).get(keyOf(e));
    const blocked = bound !== undefined && Math.floor(bound / cap) === period && e.ts < bound + gap;
    if (last + gap + p.graceMs <= w || blocked) {
      (result.dropped[i] as TelemetryEvent[]).push(e);
      return;
    }
    const merged: Open = {
      service: e.service,
      user: e.user,
      first: Math.min(e.ts, ...touched.map((s) => s.first)),
      last,
      count: 1 + touched.reduce((n, s) => n + s.count, 0),
      errors: (e.status >= 500 ? 1 : 0) + touched.reduce((n, s) => n + s.errors, 0),
    };
    open[i] = [...(open[i] as Open[]).filter((s) => !touched.includes(s)), merged];
  }
}
