import type { Flags } from "../args.js";
import type { Command } from "../command.js";
import { runOperator } from "./operator-role.js";

/** `tidemark merge`: a merge operator of the two-stage dataflow (docs/operations.md, "Merge stage"). */
export const merge: Command = {
  summary:
    "run a merge operator: TM_PARTIALS (every worker's partials) → all-services panes on TM_PANES; checkpoints in <data>/checkpoints/<id>",
  usage:
    "tidemark merge [--worker merge-0] [--data DIR] [--nats URL] [--config FILE] [--checkpoint-every 5s]\n" +
    "               [--idle-timeout 10s] [--metrics-port 0] [--partition-count 8] [--partition-by service]\n" +
    "               [--merge-partitions 1] [--merge-partition 0] [--checkpoint-timeout 60s]\n" +
    "               [--max-in-flight 4096] [--max-in-flight-bytes 67108864] [--max-alignment-bytes 67108864]",
  async run(flags: Flags): Promise<number> {
    const { MERGE_FLAGS, parseMergeConfig, startMerge } = await import("@tidemark/engine/runtime");
    return runOperator(flags, { key: "merge", flags: MERGE_FLAGS }, parseMergeConfig, (c) => startMerge(c));
  },
};
