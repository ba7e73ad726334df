/**
 * Every pane published on `tm.panes.>`, as a plain NATS subscriber sees it: duplicates included,
 * which TM_PANES drops on their message ids (docs/decisions/0012-batched-transport.md). A crash
 * test compares it with the deduplicated stream to show that a restart really replayed panes.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { paneBodyLines } from "@tidemark/engine/nats";
import type { Pane } from "@tidemark/engine/protocol";

export class PaneTap {
  private readonly sub: Subscription;
  private readonly seen: Pane[] = [];
  private readonly done: Promise<void>;

  constructor(nc: NatsConnection) {
    const sub = nc.subscribe("tm.panes.>");
    this.sub = sub;
    this.done = (async () => {
      for await (const m of sub) for (const line of paneBodyLines(m.data)) this.seen.push(JSON.parse(line) as Pane);
    })();
  }

  /** Every pane published so far that `keep` accepts, duplicates included. */
  panes(keep: (p: Pane) => boolean = () => true): Pane[] {
    return this.seen.filter(keep);
  }

  /** Waits for the server to deliver all published so far (a flush), then stops. */
  async stop(nc: NatsConnection): Promise<void> {
    await nc.flush();
    await this.sub.drain();
    await this.done;
  }
}
