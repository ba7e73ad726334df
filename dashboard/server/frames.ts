import type { StoredPane } from "./pane-store.js";
import type { ServerFrame } from "../protocol/ws-frames.js";

/**
 * Server frames as JSON text. Panes are spliced in from the JSON they arrived with, so a pane
 * is parsed once on arrival and never stringified again, whatever the number of clients.
 */
export function panesFrame(items: readonly StoredPane[]): string {
  return `{"type":"panes","panes":[${envelopes(items)}]}`;
}

export function snapshotFrame(
  panels: readonly string[],
  reset: boolean,
  rev: number,
  items: readonly StoredPane[],
): string {
  return `{"type":"snapshot","panels":${JSON.stringify(panels)},"reset":${reset},"rev":${rev},"panes":[${envelopes(items)}]}`;
}

/** Frames without panes. */
export function frame(f: Exclude<ServerFrame, { type: "panes" | "snapshot" }>): string {
  return JSON.stringify(f);
}

function envelopes(items: readonly StoredPane[]): string {
  let out = "";
  for (const s of items) out += `${out === "" ? "" : ","}{"rev":${s.rev},"pane":${s.json}}`;
  return out;
}
