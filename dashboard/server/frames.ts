import type { StoredPane } from "./pane-store.js";
import type { ServerFrame } from "../protocol/ws-frames.js";

/**
 * Server frames as JSON text. Panes are spliced in from their stored JSON (StoredPane.json: the
 * line they arrived as, or written once from the decoded pane when first sent), so a pane's JSON is
 * written at most once, whatever the number of clients (docs/decisions/0047-binary-panes.md,
 * Decision 3).
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
