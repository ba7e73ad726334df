import { parseDuration } from "@tidemark/engine/core";
import { isAllServices } from "../../protocol/all-services.js";
import type { PanelKind } from "./metrics.js";

export type RangeName = "15m" | "1h" | "6h" | "custom";

/** Everything the URL holds, so a view can be shared and reloaded (never the read token: read-token.ts). */
export interface ViewState {
  range: RangeName;
  /** Custom range bounds, ms (only with range = custom). */
  from: number | null;
  to: number | null;
  live: boolean;
  windowMs: number;
  /** Selected services; empty = all. Never "*" (the all-services key is no service to select). */
  services: string[];
  /** Policy chosen per panel. */
  policies: Partial<Record<PanelKind, string>>;
  /** Panels showing their newest window corrected (the nowcast); off unless named. */
  nowcast: Partial<Record<PanelKind, boolean>>;
  frontierBias: "countPct" | "errorRatePp" | "p99Pct" | "usersPct";
}

export const RANGES: readonly RangeName[] = ["15m", "1h", "6h", "custom"];
export const WINDOWS = [10_000, 60_000] as const;
export const DEFAULT_POLICY = "dashboard";

export function parseView(search: string): ViewState {
  const q = new URLSearchParams(search);
  const range = (RANGES as readonly string[]).includes(q.get("range") ?? "") ? (q.get("range") as RangeName) : "15m";
  const policies: Partial<Record<PanelKind, string>> = {};
  const nowcast: Partial<Record<PanelKind, boolean>> = {};
  for (const [k, v] of q) {
    if (k.startsWith("policy.") && v !== "") policies[k.slice(7) as PanelKind] = v;
    if (k.startsWith("nowcast.") && v === "1") nowcast[k.slice(8) as PanelKind] = true;
  }
  const bias = q.get("bias");
  return {
    range,
    from: num(q.get("from")),
    to: num(q.get("to")),
    live: q.get("live") !== "0",
    windowMs: windowOf(q.get("window")),
    services: (q.get("services") ?? "").split(",").filter((s) => s !== "" && !isAllServices(s)),
    policies,
    nowcast,
    frontierBias: bias === "countPct" || bias === "p99Pct" || bias === "usersPct" ? bias : "errorRatePp",
  };
}

export function viewToSearch(v: ViewState): string {
  const q = new URLSearchParams();
  q.set("range", v.range);
  if (v.range === "custom") {
    if (v.from !== null) q.set("from", String(v.from));
    if (v.to !== null) q.set("to", String(v.to));
  }
  if (!v.live) q.set("live", "0");
  q.set("window", `${v.windowMs / 1000}s`);
  if (v.services.length > 0) q.set("services", v.services.join(","));
  for (const [panel, policy] of Object.entries(v.policies)) q.set(`policy.${panel}`, policy);
  for (const [panel, on] of Object.entries(v.nowcast)) if (on) q.set(`nowcast.${panel}`, "1");
  if (v.frontierBias !== "errorRatePp") q.set("bias", v.frontierBias);
  return `?${q.toString()}`;
}

/** The time range shown, ms. `now` is the wall clock (live) or the range's own end. */
export function timeRange(v: ViewState, now: number): { from: number; to: number } {
  if (v.range === "custom" && v.from !== null && v.to !== null && v.from < v.to) return { from: v.from, to: v.to };
  const span = parseDuration(v.range === "custom" ? "1h" : v.range);
  return { from: now - span, to: now };
}

function num(s: string | null): number | null {
  if (s === null || s === "") return null;
  const n = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  return Number.isFinite(n) ? n : null;
}

function windowOf(s: string | null): number {
  try {
    const ms = parseDuration(s ?? "10s");
    return (WINDOWS as readonly number[]).includes(ms) ? ms : 10_000;
  } catch {
    return 10_000;
  }
}
