export { startTestNats, type TestNats } from "./harness/nats.js";
export { fileClockNow } from "./harness/file-clock.js";
export { spawnTidemark, stopLeftovers, isAlive, waitFor, TIDEMARK_BIN, type CliProcess } from "./harness/processes.js";
export {
  startNatsProxy,
  isPanesAck,
  isPanePublish,
  type NatsProxy,
  type NatsFrame,
  type FrameRule,
  type FrameVerdict,
} from "./harness/nats-proxy.js";
