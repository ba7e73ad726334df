/**
 * `promtool check metrics` (the real Prometheus tool, from PATH) on a metrics text: its exit code and
 * everything it printed. A clean exposition gives `{ code: 0, output: "" }`.
 */
import { spawn } from "node:child_process";

export interface PromtoolVerdict {
  code: number | null;
  output: string;
}

export function promtoolCheckMetrics(body: string): Promise<PromtoolVerdict> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (b: Buffer) => (output += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (output += b.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
    child.stdin.end(body);
  });
}
