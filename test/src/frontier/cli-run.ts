/** Runs the built `tidemark` CLI to completion and captures its output. */
import { execFile } from "node:child_process";
import { TIDEMARK_BIN } from "../harness/processes.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TIDEMARK_BIN, ...args],
      { maxBuffer: 256 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
