/**
 * What came back on a publish's reply subject (docs/decisions/0006-engine-runtime.md): the stream's
 * PubAck (`duplicate` when the message id was already stored), a PubAck carrying an error (the
 * stream refused the message), or a status message with no PubAck (503 "no responders": no stream
 * listens on the subject, e.g. a nats-server starting or stopping; nothing was stored). Read by the
 * engine's pane sink and by InboxAcks alike.
 */
import type { Msg } from "@nats-io/transport-node";

export type PubAckReply =
  | { kind: "acked"; duplicate: boolean }
  | { kind: "refused"; text: string }
  | { kind: "status"; code: number; description: string };

export function pubAckOf(msg: Msg): PubAckReply {
  const text = msg.string();
  const code = msg.headers?.code ?? 0;
  if (text === "" || code >= 300) return { kind: "status", code, description: msg.headers?.description ?? "" };
  if (text.includes('"error"')) return { kind: "refused", text };
  return { kind: "acked", duplicate: text.includes('"duplicate":true') };
}
