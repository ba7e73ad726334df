import { RuntimeError } from "../errors.js";

/**
 * Parses an owned-partition list such as "0-3,6" against `count` partitions: sorted, unique,
 * each in 0..count-1. "all" or an empty string means every partition.
 */
export function parsePartitionList(spec: string, count: number, source = "--partitions"): number[] {
  const text = spec.trim();
  if (text === "" || text === "all") return Array.from({ length: count }, (_, i) => i);
  const owned = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw bad(source, spec, count, `"${part}" is not a number or a range a-b`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw bad(source, spec, count, `range "${part}" runs backwards`);
    if (to >= count) throw bad(source, spec, count, `partition ${to} does not exist`);
    for (let p = from; p <= to; p++) owned.add(p);
  }
  return [...owned].sort((a, b) => a - b);
}

/** The compact form of a partition list: [0,1,2,3,6] → "0-3_6" (safe in file names and ids). */
export function formatPartitionList(partitions: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < partitions.length) {
    let j = i;
    while (j + 1 < partitions.length && partitions[j + 1] === (partitions[j] as number) + 1) j++;
    parts.push(i === j ? `${partitions[i]}` : `${partitions[i]}-${partitions[j]}`);
    i = j + 1;
  }
  return parts.join("_");
}

function bad(source: string, spec: string, count: number, why: string): RuntimeError {
  return new RuntimeError(
    "TM_ENGINE_BAD_PARTITIONS",
    `${source} "${spec}": ${why}; write a list of partitions and ranges such as "0-3,6" within 0-${count - 1}, or "all"`,
  );
}
