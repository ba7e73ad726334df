import type { Pane } from "@tidemark/engine/protocol";
import type { DashboardConfig } from "./config.js";
import type { DashboardMetrics } from "./metrics.js";
import { PaneStore, type StoredPane } from "./pane-store.js";
import { SessionBook } from "./session-book.js";

/**
 * Intake of the panes read from TM_PANES (docs/websocket-protocol.md, "What the server holds"):
 * window panes go to the pane store as they come; session panes are folded by the session book
 * into per-service session metrics, stored as derived panes. Duplicates and older seqs stop here;
 * each newly stored pane version goes to `stored` once.
 */
export class PaneIntake {
  readonly store: PaneStore;
  private readonly sessionBook: SessionBook;

  constructor(
    config: Pick<DashboardConfig, "maxWindowsPerSeries" | "maxPanes" | "discardingPolicies">,
    private readonly metrics: DashboardMetrics,
    private readonly stored: (pane: StoredPane) => void,
  ) {
    this.store = new PaneStore(config.maxWindowsPerSeries, config.maxPanes);
    this.sessionBook = new SessionBook(config.maxWindowsPerSeries, config.discardingPolicies);
  }

  pane(pane: Pane, json: string): void {
    if (pane.session) {
      for (const d of this.sessionBook.apply(pane)) this.keep(d, JSON.stringify(d));
      return;
    }
    this.keep(pane, json);
  }

  /** Stores a pane unless an equal or later seq of its id is held. */
  private keep(pane: Pane, json: string): void {
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
