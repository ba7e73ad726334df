export { spawnNatsServer, type NatsServerProcess, type NatsServerOptions } from "./nats/nats-server.js";
export { freePort, isPortFree, preferredOrFreePort } from "./ports.js";
export { READY_PREFIX, readyLine, parseReadyLine } from "./ready-line.js";
export { DeployError, type DeployErrorCode } from "./errors.js";
