/**
 * Billing's final service panes of one window size, read from TM_PANES by subject only
 * (`tm.panes.billing.<size>`: a soak's whole stream is too big to read back), latest per id.
 */
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { paneBodyLines } from "@tidemark/engine/nats";
import { panesSubject, type Pane } from "@tidemark/engine/protocol";

/** "<service>|<window start>" → its final count and errors. */
export async function billingFinals(
  nc: NatsConnection,
  sizeMs: number,
): Promise<Map<string, { count: number; errors: number }>> {
  const subject = panesSubject("billing", sizeMs);
  const jsm = await jetstreamManager(nc);
  const last = (await jsm.streams.getMessage("TM_PANES", { last_by_subj: subject }))?.seq ?? 0;
  const out = new Map<string, { count: number; errors: number; seq: number }>();
  if (last === 0) return new Map();
  // One subject: a plain filter (the server's 2.9 takes no list of them).
  const consumer = await jetstream(nc).consumers.get("TM_PANES", {
    deliver_policy: DeliverPolicy.All,
    filter_subjects: subject,
  });
  const messages = await consumer.consume({ max_messages: 256 });
  for await (const m of messages) {
    for (const line of paneBodyLines(m.data)) {
      const p = JSON.parse(line) as Pane;
      if (p.kind !== "final" || p.sessions || p.key.route !== undefined || p.key.service === "*") continue;
      const key = `${p.key.service}|${p.window.start}`;
      const prev = out.get(key);
      if (!prev || p.seq > prev.seq) out.set(key, { count: p.value.count, errors: p.value.errors, seq: p.seq });
    }
    if (m.seq >= last) break;
  }
  return new Map([...out].map(([k, v]) => [k, { count: v.count, errors: v.errors }]));
}
