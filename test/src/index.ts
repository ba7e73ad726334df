export { startTestNats, type TestNats } from "./harness/nats.js";
export { spawnTidemark, isAlive, waitFor, TIDEMARK_BIN, type CliProcess } from "./harness/processes.js";
