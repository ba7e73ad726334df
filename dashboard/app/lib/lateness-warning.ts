import type { ServiceDial } from "@tidemark/engine/protocol";
import type { FrontierPoint } from "../../protocol/ws-frames.js";
import { formatNumber } from "./format.js";

/** At most this many flagged services are named on one panel; the rest are counted. */
export const MAX_NAMED = 3;

/**
 * The dial of `service` under a policy for a panel's window size; the lateness correlation is
 * per (policy, service), so another size's dial still tells it when this size has none.
 */
function dialOf(point: FrontierPoint, service: string, windowMs: number): ServiceDial | undefined {
  const own = point.services.filter((d) => d.service === service);
  return own.find((d) => d.windowMs === windowMs) ?? own[0];
}

/** "9×", "1.5×", "3× less often" reads as a ratio, two significant digits. */
function times(r: number): string {
  const x = r >= 1 ? r : 1 / r;
  const text = x >= 10 ? String(Math.round(x)) : String(Math.round(x * 10) / 10);
  return `${text}\u00d7 ${r >= 1 ? "more" : "less"} often`;
}

/**
 * "late requests of checkout fail 9× more often: dashboard under-reports its error rate by ≈ 1.4 pp":
 * a service whose lateness the engine flags as correlated with errors (docs/semantics.md,
 * "Correlated lateness"), named with the direction and size of its on-time error-rate bias
 * (docs/websocket-protocol.md, "Bias on screen").
 */
export function latenessWarning(policy: string, d: ServiceDial): string {
  const l = d.lateness;
  const rate = (errors: number, events: number) => formatNumber(events === 0 ? 0 : (100 * errors) / events);
  const how =
    l.ratio === null
      ? `fail ${rate(l.lateErrors, l.lateEvents)} % of the time, on-time ones never`
      : l.ratio === 0
        ? `never fail, on-time ones ${rate(l.onTimeErrors, l.onTimeEvents)} % of the time`
        : `fail ${times(l.ratio)}`;
  const e = d.onTime.errorRatePp;
  const so = d.onTime.provisional === true ? " so far (provisional)" : "";
  let effect: string;
  if (e === null) effect = `${policy}'s error-rate bias for it is not measured yet`;
  else if (formatNumber(Math.abs(e)) === "0") effect = `${policy}'s error rate for it is not measurably off${so}`;
  else
    effect = `${policy} ${e < 0 ? "under" : "over"}-reports its error rate by \u2248 ${formatNumber(Math.abs(e))} pp${so}`;
  return `late requests of ${d.service} ${how}: ${effect}`;
}

/** The warnings a panel shows for the services it draws, flagged ones only, at most MAX_NAMED named. */
export function latenessWarnings(
  point: FrontierPoint | undefined,
  services: readonly string[],
  windowMs: number,
): string[] {
  if (!point) return [];
  const flagged = services
    .map((s) => dialOf(point, s, windowMs))
    .filter((d): d is ServiceDial => d !== undefined && d.lateness.flagged);
  const out = flagged.slice(0, MAX_NAMED).map((d) => latenessWarning(point.policy, d));
  if (flagged.length > MAX_NAMED) out.push(`and ${flagged.length - MAX_NAMED} more services with correlated lateness`);
  return out;
}
