/** Errors of @tidemark/dashboard, each with a stable code. */
export type DashboardErrorCode =
  | "TM_DASHBOARD_CONFIG_INVALID"
  | "TM_DASHBOARD_CONFIG_FILE"
  | "TM_DASHBOARD_QUERY_INVALID"
  | "TM_DASHBOARD_FRAME_INVALID"
  | "TM_DASHBOARD_UNAUTHORIZED"
  | "TM_DASHBOARD_ORIGIN_REJECTED"
  | "TM_DASHBOARD_APP_MISSING"
  | "TM_DASHBOARD_LISTEN_FAILED";

export class DashboardError extends Error {
  constructor(
    readonly code: DashboardErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "DashboardError";
  }
}
