/** @tidemark/dashboard: the dashboard server (`startDashboard`) and its configuration. */
export { startDashboard, type DashboardServer } from "./server.js";
export { resolveConfig, readConfigFile, envConfig, type DashboardConfig, type DashboardConfigInput } from "./config.js";
export { DashboardError, type DashboardErrorCode } from "./errors.js";
export { CLOSE_TOO_SLOW } from "./client-session.js";
export type * from "../protocol/ws-frames.js";
export type * from "../protocol/alerts.js";
export { startRemoteWrite, type RemoteWriteRole } from "./remote-write/remote-write-role.js";
export {
  resolveRemoteWriteConfig,
  fileLayer as remoteWriteFileLayer,
  envLayer as remoteWriteEnvLayer,
  flagLayer as remoteWriteFlagLayer,
  REMOTE_WRITE_FLAGS,
  type RemoteWriteConfig,
} from "./remote-write/remote-write-config.js";
