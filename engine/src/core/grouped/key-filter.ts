/**
 * An output that passes only the panes and late records of the keys `keep` accepts: what a group's
 * core or a split merge operator's core emits for keys another operator now owns is dropped there
 * (docs/decisions/0057-elastic-workers.md). One wrapper per output object, made again only when the
 * output changes (an operator passes the same one for every item of an input message).
 */
import type { LateRecord, Pane } from "../../protocol.js";
import type { CoreOutput } from "../types.js";

export function keyFilter(
  keep: (service: string, route: string | undefined) => boolean,
): (out: CoreOutput) => CoreOutput {
  let last: CoreOutput | null = null;
  let kept: CoreOutput | null = null;
  return (out) => {
    if (out === last && kept !== null) return kept;
    last = out;
    kept = {
      pane: (p: Pane) => {
        if (keep(p.key.service, p.key.route)) out.pane(p);
      },
      late: (r: LateRecord) => {
        if (keep(r.event.service, r.event.route)) out.late(r);
      },
    };
    return kept;
  };
}
