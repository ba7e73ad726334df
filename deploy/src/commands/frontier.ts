import { readFileSync, statSync } from "node:fs";
import {
  defaultCoreConfig,
  formatDuration,
  lagGracePolicy,
  maxDelay,
  parseDuration,
  runFrontier,
  validateCoreConfig,
  type CoreConfig,
  type FrontierResult,
  type PolicyConfig,
} from "@tidemark/engine/core";
import type { TelemetryEvent } from "@tidemark/engine/protocol";
import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { Fields } from "../config/fields.js";
import { DeployError } from "../errors.js";
import { PROGRESS_MIN_BYTES, PROGRESS_MIN_EVENTS, progressBar, showProgress } from "../recording/progress-bar.js";
import { readRecording } from "../recording/read-recording.js";
import { partitionCountOf, refuseCountAsPartitions } from "../partition-count.js";

/** The seed's Block 7 sweep, used when no --policy is given. */
const DEFAULT_SWEEP = ["2s+0s", "10s+0s", "30s+0s", "90s+0s", "10s+30s", "10s+90s"];

interface NamedPolicy {
  label: string;
  policy: PolicyConfig;
}

function ms(v: string, what: string): number {
  try {
    return parseDuration(v);
  } catch {
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      `--policy ${what}: "${v}" is not a duration; write LAG+GRACE such as 10s+30s`,
    );
  }
}

/**
 * Policies and partition count from --config FILE (its `policies` and `partitionCount`), else the
 * defaults: dashboard, alerting, billing over 8 partitions.
 */
function fileSettings(file: string | undefined): Pick<CoreConfig, "policies" | "partitions"> {
  if (file === undefined) return defaultCoreConfig();
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (e) {
    throw new DeployError("TM_CONFIG_INVALID", `${file}: cannot read it as JSON (${(e as Error).message})`);
  }
  if (doc.partitions !== undefined)
    throw new DeployError("TM_CONFIG_INVALID", `${file}: $.partitions is now $.partitionCount: rename the key`);
  const f = new Fields(file);
  const partitions = f.optional(doc.partitionCount, (v) => f.int(v, "$.partitionCount", 1, 4096), undefined);
  try {
    return validateCoreConfig({ policies: doc.policies, partitions }, "$");
  } catch (e) {
    throw new DeployError("TM_CONFIG_INVALID", `${file}: ${(e as Error).message}`);
  }
}

/** `LAG+GRACE`, `perfect[+GRACE]`, or the name of a configured policy. */
export function parsePolicy(
  spec: string,
  index: number,
  events: readonly TelemetryEvent[],
  named: readonly PolicyConfig[],
): NamedPolicy {
  const found = named.find((p) => p.name === spec);
  if (found) return { label: spec, policy: { ...found, name: `p${index}-${found.name}` } };
  const [lagText = "", graceText = "0", ...rest] = spec.split("+");
  if (rest.length > 0 || lagText === "" || (lagText !== "perfect" && !/^\d/.test(lagText)))
    throw new DeployError(
      "TM_CLI_BAD_FLAG",
      `--policy "${spec}": write LAG+GRACE (e.g. 10s+30s), perfect, or one of ${named.map((p) => p.name).join(", ")}`,
    );
  const grace = ms(graceText, "grace");
  if (lagText === "perfect") {
    const lagMs = maxDelay(events);
    return {
      label: `perfect+${label(grace)}`,
      policy: { ...lagGracePolicy(index, lagMs, grace), watermark: { kind: "perfect", lagMs } },
    };
  }
  return {
    label: `${label(ms(lagText, "lag"))}+${label(grace)}`,
    policy: lagGracePolicy(index, ms(lagText, "lag"), grace),
  };
}

/** Size in bytes, 0 when it cannot be read (the reader then names the problem). */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

const label = (v: number): string => (v === 0 ? "0s" : formatDuration(v));
const sec = (v: number): string => `${Math.round(v / 100) / 10}s`;

function table(file: string, windowMs: number, labels: string[], r: FrontierResult): string {
  const rows = [
    `  ${file}: ${r.events} events, ${r.windows} (window, service) pairs, ${formatDuration(windowMs)} tumbling windows`,
    `  ${"policy".padEnd(22)}${"lag".padStart(7)}${"grace".padStart(8)}${"emit delay".padStart(12)}${"windows wrong".padStart(15)}` +
      `${"events lost".padStart(13)}${"max error".padStart(11)}${"accuracy".padStart(11)}${"error-rate bias".padStart(17)}`,
  ];
  r.policies.forEach((p, i) => {
    const bias =
      p.error_rate_bias_pp === null
        ? "n/a"
        : `${p.error_rate_bias_pp >= 0 ? "+" : ""}${p.error_rate_bias_pp.toFixed(3)} pp`;
    rows.push(
      `  ${(labels[i] ?? "").padEnd(22)}${sec(p.lag_ms).padStart(7)}${sec(p.grace_ms).padStart(8)}${sec(p.emit_delay_ms).padStart(12)}` +
        `${String(p.wrong_windows).padStart(15)}${String(p.lost).padStart(13)}${String(p.max_error).padStart(11)}` +
        `${`${p.accuracy_pct.toFixed(2)}%`.padStart(11)}${bias.padStart(17)}`,
    );
  });
  return rows.join("\n");
}

/** `tidemark frontier`: the accuracy/latency frontier of policies over a recording. */
export const frontier: Command = {
  summary: "run policies over a recording through the core and print the accuracy/latency frontier",
  usage:
    "tidemark frontier --input FILE [--window 60s] [--policy LAG+GRACE|perfect|NAME …] [--config FILE] [--partition-count 8] [--json] [--progress]",
  booleans: ["json", "progress"],
  async run(flags: Flags): Promise<number> {
    refuseCountAsPartitions(flags, "frontier");
    const file = flags.required(
      "input",
      "the recording to replay, e.g. --input rec.ndjson (tidemark simulate writes one)",
    );
    const windowText = flags.get("window") ?? "60s";
    const windowMs = ms(windowText, "window");
    if (windowMs <= 0)
      throw new DeployError("TM_CLI_BAD_FLAG", `--window must be a positive duration such as 60s, got "${windowText}"`);
    const settings = fileSettings(flags.get("config"));
    const forced = flags.bool("progress", false);
    const bytes = fileSize(file);
    const reading = progressBar("reading ", bytes, showProgress(forced, bytes >= PROGRESS_MIN_BYTES));
    const { events, sorted } = await readRecording(file, (n) => reading.update(n));
    reading.end();
    if (sorted)
      process.stderr.write(`tidemark frontier: ${file} was not in ingest_ts order; replaying it sorted by ingest_ts\n`);
    const specs = flags.all("policy");
    const policies = (specs.length > 0 ? specs : DEFAULT_SWEEP).map((s, i) =>
      parsePolicy(s, i, events, settings.policies),
    );
    const bar = progressBar("frontier", events.length, showProgress(forced, events.length >= PROGRESS_MIN_EVENTS));
    const result = runFrontier(events, {
      windowMs,
      policies: policies.map((p) => p.policy),
      partitions: partitionCountOf(flags, process.env, settings.partitions),
      onProgress: (n) => bar.update(n),
      progressEvery: 50_000,
    });
    bar.end();
    process.stdout.write(
      (flags.bool("json", false)
        ? JSON.stringify(result)
        : table(
            file,
            windowMs,
            policies.map((p) => p.label),
            result,
          )) + "\n",
    );
    return 0;
  },
};
