/**
 * A drawn stream as the session property tests feed it: events in arrival order (ts + delay), where
 * a pause first inserts a heartbeat and delays every later arrival by it (log time jumps: sessions
 * close, bounds purge). Shared by session-property.test.ts and session-shared.property.test.ts.
 */
import type { TelemetryEvent } from "../../../protocol.js";

/** One drawn event: its event time, how late it arrives, and the pause before it. */
export interface ArrivalDraw {
  ts: number;
  delay: number;
  pause: number;
  service: string;
  route: string;
  status: number;
  user: string;
}

/** An event, or a heartbeat at that log time. */
export type Step = TelemetryEvent | number;

export function arrivalSteps(raw: readonly ArrivalDraw[]): Step[] {
  const sorted = raw.map((r, i) => ({ r, i })).sort((x, y) => x.r.ts + x.r.delay - (y.r.ts + y.r.delay) || x.i - y.i);
  const steps: Step[] = [];
  let shift = 0;
  let last = -Infinity;
  for (const { r } of sorted) {
    if (r.pause > 0 && last > -Infinity) {
      steps.push(last + r.pause);
      shift += r.pause;
    }
    const e: TelemetryEvent = {
      ts: r.ts,
      ingest_ts: r.ts + r.delay + shift,
      service: r.service,
      route: r.route,
      status: r.status,
      latency_ms: 1,
      user: r.user,
    };
    last = e.ingest_ts;
    steps.push(e);
  }
  return steps;
}
