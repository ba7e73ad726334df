/**
 * `/api/v1/status/buildinfo` (docs/decisions/0037-prometheus-data-model.md, "buildinfo"): the
 * Prometheus version whose HTTP API and PromQL tidemark answers as, so Grafana picks the requests
 * that version takes (label values with `match[]`); the other fields say it is tidemark.
 */

/** The Prometheus release tidemark's API and PromQL are tested against (the real server in the suite). */
export const PROMETHEUS_VERSION = "2.42.0";

export interface BuildInfo {
  readonly version: string;
  readonly revision: string;
  readonly branch: string;
  readonly buildUser: string;
  readonly buildDate: string;
  readonly goVersion: string;
}

/** @param nodeVersion the runtime's version (`process.versions.node`): tidemark has no Go version to give */
export function buildInfo(nodeVersion: string): BuildInfo {
  return {
    version: PROMETHEUS_VERSION,
    revision: "tidemark",
    branch: "tidemark",
    buildUser: "tidemark",
    buildDate: "",
    goVersion: `none (tidemark on Node.js ${nodeVersion})`,
  };
}
