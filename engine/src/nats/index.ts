/**
 * `@tidemark/engine/nats`: how every role reaches NATS and the JetStream streams they share
 * (docs/architecture.md, "Packages and boundaries"). Ingest, the dashboard server, deploy and
 * the engine runtime import it; it imports nothing of theirs.
 */
export {
  eventsStreamSpec,
  panesStreamSpec,
  lateStreamSpec,
  partialsStreamSpec,
  checkpointsStreamSpec,
  allStreamSpecs,
  ensureStream,
  streamConfigOf,
  streamDifferences,
  type StreamSpec,
  type StreamSpecOptions,
} from "./streams.js";
export { natsConnectOptions, redactUrl, type NatsConnectOptions } from "./connect-options.js";
export { connectNats } from "./connect-nats.js";
export { NatsError, StreamMismatchError, type NatsErrorCode } from "./errors.js";
export { InboxAcks, type AckedPublish, type InboxTransport } from "./inbox-acks.js";
export {
  compressPaneBody,
  decodePaneBody,
  decodePaneRecords,
  isGzipBody,
  paneBodyLines,
  paneBodyParts,
  type PaneBodyParts,
} from "./pane-body.js";
