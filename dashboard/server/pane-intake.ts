import type { Pane } from "@tidemark/engine/protocol";
import type { DashboardConfig } from "./config.js";
import type { DashboardMetrics } from "./metrics.js";
import { PaneStore, type StoredPane } from "./pane-store.js";

/**
 * Intake of the panes read from TM_PANES (docs/websocket-protocol.md, "What the server holds"):
 * window panes and the engine's session panes (per policy, service and window) go to the pane store
 * as they come. Duplicates and older seqs stop here; each newly stored pane version goes to `stored`
 * once.
 */
export class PaneIntake {
  readonly store: PaneStore;

  constructor(
    config: Pick<DashboardConfig, "maxWindowsPerSeries" | "maxPanes">,
    private readonly metrics: DashboardMetrics,
    private readonly stored: (pane: StoredPane) => void,
  ) {
    this.store = new PaneStore(config.maxWindowsPerSeries, config.maxPanes);
  }

  /** Stores a pane unless an equal or later seq of its id is held; `json` as PaneStore.upsert takes it. */
  pane(pane: Pane, json: string | undefined): void {
    const stored = this.store.upsert(pane, json);
    if (!stored) {
      this.metrics.panesIgnored.inc();
      return;
    }
    this.metrics.panesApplied.inc();
    this.metrics.storedPanes.set(this.store.size);
    this.stored(stored);
  }
}
