/** Errors of @tidemark/dashboard, each with a stable code. */
export type DashboardErrorCode =
  | "TM_DASHBOARD_CONFIG_INVALID"
  | "TM_DASHBOARD_CONFIG_FILE"
  | "TM_DASHBOARD_QUERY_INVALID"
  | "TM_DASHBOARD_FRAME_INVALID"
  | "TM_DASHBOARD_UNAUTHORIZED"
  | "TM_DASHBOARD_ORIGIN_REJECTED"
  | "TM_DASHBOARD_APP_MISSING"
  | "TM_DASHBOARD_LISTEN_FAILED"
  // Security and limits (docs/security.md).
  | "TM_DASHBOARD_HOST_REJECTED"
  | "TM_DASHBOARD_LIMIT"
  | "TM_DASHBOARD_TLS"
  | "TM_DASHBOARD_INTERNAL"
  // The unified config's sections the dashboard validates (docs/operations.md, "Alerts").
  | "TM_CONFIG_INVALID"
  // The Prometheus query API (docs/prometheus-api.md, "Errors").
  | "TM_PROMQL_PARSE"
  | "TM_PROMQL_UNSUPPORTED"
  | "TM_PROMQL_EXECUTION"
  | "TM_PROM_PARAM_INVALID"
  | "TM_PROM_NOT_FOUND"
  // Query limits (docs/prometheus-api.md, "Query limits").
  | "TM_PROM_LIMIT"
  | "TM_PROM_TIMEOUT"
  | "TM_PROM_BUSY"
  | "TM_PROM_CANCELED";

export class DashboardError extends Error {
  constructor(
    readonly code: DashboardErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "DashboardError";
  }
}
