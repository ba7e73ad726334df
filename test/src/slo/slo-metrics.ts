/**
 * Test support for the SLO tests: a dashboard's /metrics read as samples, and promtool's verdict
 * on it (docs/operations.md, "Metrics"). promtool is resolved from PATH.
 */
import { promtoolCheckMetrics } from "../harness/promtool.js";

/** The value of the sample `name{labels}` (labels as written, e.g. `outcome="ok"`), NaN when absent. */
export async function metricOf(url: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const head = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split("\n").find((l) => l.startsWith(head));
  return line === undefined ? NaN : Number(line.slice(head.length));
}

/** `promtool check metrics` on a dashboard's /metrics: its exit code and everything it printed. */
export async function promtoolCheck(url: string): Promise<{ code: number | null; output: string }> {
  const body = await (await fetch(`${url}/metrics`)).text();
  return promtoolCheckMetrics(body);
}
