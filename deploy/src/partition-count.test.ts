import { describe, expect, it } from "vitest";
import { parseFlags } from "./args.js";
import { partitionCountOf, refuseCountAsPartitions } from "./partition-count.js";

describe("the partition count on the command line", () => {
  it("is --partition-count, else TIDEMARK_PARTITION_COUNT, else the fallback", () => {
    expect(partitionCountOf(parseFlags(["--partition-count", "3"]), { TIDEMARK_PARTITION_COUNT: "5" }, 8)).toBe(3);
    expect(partitionCountOf(parseFlags([]), { TIDEMARK_PARTITION_COUNT: "5" }, 8)).toBe(5);
    expect(partitionCountOf(parseFlags([]), {}, 8)).toBe(8);
    expect(() => partitionCountOf(parseFlags(["--partition-count", "0"]), {}, 8)).toThrow(
      /--partition-count must be a whole number from 1 to 4096/,
    );
    expect(() => partitionCountOf(parseFlags([]), { TIDEMARK_PARTITION_COUNT: "x" }, 8)).toThrow(
      /TIDEMARK_PARTITION_COUNT must be a whole number/,
    );
  });

  it("refuses the count's old flag --partitions, naming the new one", () => {
    expect(() => refuseCountAsPartitions(parseFlags(["--partitions", "8"]), "backfill")).toThrow(
      /tidemark backfill: --partitions is now --partition-count .*write --partition-count 8/,
    );
    expect(() => refuseCountAsPartitions(parseFlags(["--partition-count", "8"]), "backfill")).not.toThrow();
  });
});
