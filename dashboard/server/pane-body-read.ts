/**
 * A TM_PANES message body as the dashboard reads it: each record decoded once, to the object the
 * server works with, and its JSON text kept only when the body carried it (NDJSON). For a binary
 * body the text is written later, once, if the pane is ever sent (pane-store.ts). The formats are
 * told apart by ADR 0047's one decoder (`paneBodyParts`, `@tidemark/engine/nats`: the same three
 * formats, the same errors) — decodePaneBody would hand back text, which the server would parse
 * again (docs/decisions/0047-binary-panes.md, Decision 3).
 */
import type { Pane } from "@tidemark/engine/protocol";
import { paneBodyParts } from "@tidemark/engine/nats";

/** One pane of a body, and its JSON text when the body held it as text (NDJSON). */
export interface ReadPane {
  readonly pane: Pane;
  readonly json: string | undefined;
}

/** A body's panes in order, and why each record that is not a pane was left out. */
export interface BodyPanes {
  readonly panes: ReadPane[];
  readonly rejected: string[];
}

/**
 * The panes of a TM_PANES body: binary, NDJSON, gzip of either (docs/protocol.md, "Pane bodies").
 * Throws (PaneBodyError, TM_PANE_BODY_VERSION for a newer version) when the body does not decode;
 * a record that does not parse or is not a pane is only rejected, the others are read.
 */
export function readPaneBody(body: Uint8Array): BodyPanes {
  const parts = paneBodyParts(body);
  const out: BodyPanes = { panes: [], rejected: [] };
  if (parts.records) {
    for (const record of parts.records) {
      const pane = asPane(record);
      if (typeof pane === "string") out.rejected.push(pane);
      else out.panes.push({ pane, json: undefined });
    }
    return out;
  }
  for (const line of parts.lines) {
    const pane = asPane(parsed(line));
    if (typeof pane === "string") out.rejected.push(pane);
    else out.panes.push({ pane, json: line });
  }
  return out;
}

/** A line that does not parse, with the parser's reason. */
class NotJson {
  constructor(readonly why: string) {}
}

function parsed(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch (err) {
    return new NotJson((err as Error).message);
  }
}

/** The record as a pane, checking the fields the store relies on; or why it is not one. */
export function asPane(r: unknown): Pane | string {
  if (r instanceof NotJson) return `not JSON: ${r.why}`;
  const p = (typeof r === "object" && r !== null ? r : {}) as Partial<Pane>;
  const ok =
    typeof p.id === "string" &&
    typeof p.seq === "number" &&
    typeof p.policy === "string" &&
    typeof p.key?.service === "string" &&
    typeof p.window?.start === "number" &&
    typeof p.window?.end === "number" &&
    typeof p.value === "object";
  return ok ? (p as Pane) : "missing id, seq, policy, key.service, window or value";
}
