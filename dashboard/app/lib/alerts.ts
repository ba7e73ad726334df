import type { ActiveAlert, AlertEvent, AlertPanel, AlertsView } from "../../protocol/alerts.js";

/** The active alerts a panel marks: its own panel, policy and window size. */
export function alertsOnPanel(
  view: AlertsView | null,
  panel: AlertPanel,
  policy: string,
  windowMs: number,
): ActiveAlert[] {
  return (view?.active ?? []).filter((a) => a.panel === panel && a.policy === policy && a.windowMs === windowMs);
}

/** "HighErrorRate · checkout 0.2 > 0.05 (early pane)". */
export function alertLine(a: ActiveAlert | AlertEvent): string {
  const who = a.service === null ? "" : ` · ${a.service}`;
  return `${a.alertname}${who} ${a.annotations["value"] ?? a.value} ${a.threshold} (${a.paneKind} pane)`;
}

/**
 * The in-app link of an alert: its generatorURL's view (search and panel), here. The read token
 * stays out of it (the tab keeps it: read-token.ts).
 */
export function alertHref(a: Pick<ActiveAlert, "generatorURL">): string {
  let u: URL;
  try {
    u = new URL(a.generatorURL);
  } catch {
    return "";
  }
  u.searchParams.delete("token");
  return `${u.search}${u.hash}`;
}

/** A log time as the health panel writes it: "10:00:10". */
export function clock(t: number): string {
  return new Date(t).toLocaleTimeString("en-GB", { hour12: false });
}
