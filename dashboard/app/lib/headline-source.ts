import type { Pane } from "@tidemark/engine/protocol";
import { headlineWindow } from "./service-pool.js";
import type { MetricDef } from "./metrics.js";
import type { SeriesPoint } from "./pane-book.js";

/**
 * An all-services pane older than this many windows behind the services' newest window is not
 * read (the merge stage has stopped): the headline pools the services' panes again.
 */
export const STALE_WINDOWS = 3;

/**
 * What a headline reads (docs/websocket-protocol.md, "Pooling services"):
 * - `engine`: "All services" from the engine's all-services ("*") pane of one window, as is;
 * - `browser`: the services' panes of one window pooled here (sum / max / overall);
 * - `service`: one service's pane.
 */
export interface HeadlineSource {
  from: "engine" | "browser" | "service";
  t: number;
  /** engine: the one "*" pane; else one pane per service, their biases of one kind. */
  panes: Pane[];
  /** browser: the newest window's panes' biases are of several kinds, so this older window is shown. */
  newerMixed: boolean;
  /** browser: services of the window left out because their panes are of a later kind. */
  leftOut: number;
  /** engine: some service has a newer window than the all-services pane shown. */
  servicesAhead: boolean;
}

/**
 * The headline of a panel: with no service selected (`allSelected`) and an all-services pane of
 * the panel's policy and window size not stale, the newest one; otherwise the services' panes as
 * `headlineWindow` picks them.
 */
export function headlineSource(
  series: Map<string, SeriesPoint[]>,
  star: readonly SeriesPoint[],
  allSelected: boolean,
  windowMs: number,
): HeadlineSource | null {
  let newest = -Infinity;
  for (const s of series.values()) newest = Math.max(newest, s.at(-1)?.t ?? -Infinity);
  const last = star.at(-1);
  if (allSelected && last && last.t >= newest - STALE_WINDOWS * windowMs)
    return {
      from: "engine",
      t: last.t,
      panes: [last.pane],
      newerMixed: false,
      leftOut: 0,
      servicesAhead: newest > last.t,
    };
  const w = headlineWindow(series);
  if (!w) return null;
  return { ...w, from: w.panes.length === 1 ? "service" : "browser", servicesAhead: false };
}

/** The headline's value: the all-services pane's own (no sum or max here), else the services' pooled. */
export function headlineValue(
  def: MetricDef,
  source: { from: HeadlineSource["from"]; panes: readonly Pane[] },
): number {
  const [first] = source.panes;
  if (!first) return NaN;
  return source.from === "engine" ? def.value(first) : def.pool(source.panes);
}
