export { spawnNatsServer, type NatsServerProcess, type NatsServerOptions } from "./nats/nats-server.js";
export { freePort, isPortFree, preferredOrFreePort } from "./ports.js";
export { READY_PREFIX, readyLine, parseReadyLine } from "./ready-line.js";
export { DeployError, type DeployErrorCode } from "./errors.js";
export { DemoModel, type DemoEvent, type PlannedEvent, type DemoModelOptions } from "./demo/model.js";
export { DEMO_CATALOG, type ServiceSpec, type RouteSpec } from "./demo/catalog.js";
