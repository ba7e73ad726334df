/**
 * Merge partitions (docs/decisions/0033-merge-partitions.md): which merge partition of TM_PARTIALS
 * a group key belongs to, and a worker's partial batch cut by them.
 *
 * Pure: no node:* imports, no clock, no env.
 */
import { fnv1a32 } from "./fnv1a.js";
import { ALL_SERVICES, type PartialBatch } from "./partial-batch.js";

/**
 * The merge partition of a group key among `mergePartitions`: ALL_SERVICES always on 0 (the operator that also coordinates checkpoints), a service by the
 * FNV-1a 32-bit hash that places services on TM_EVENTS partitions, mixed (murmur3's fmix32) before
 * the modulo: FNV-1a's low bits alone follow its last characters' low bits, and unmixed, services
 * sharing a TM_EVENTS partition would share a merge partition whenever the counts share a factor.
 */
export function mergePartitionOf(service: string, mergePartitions: number): number {
  if (mergePartitions <= 1 || service === ALL_SERVICES) return 0;
  return fmix32(fnv1a32(service)) % mergePartitions;
}

/** murmur3's 32-bit finalizer: every input bit reaches every output bit. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * `batch` cut by merge partition: one batch per partition, each with the worker's whole progress
 * (every merge operator needs every partition's clock for its watermark) and the deltas of its keys.
 */
export function splitByMergePartition(batch: PartialBatch, mergePartitions: number): PartialBatch[] {
  if (mergePartitions <= 1) return [batch];
  const out = Array.from({ length: mergePartitions }, (): PartialBatch => ({ ...batch, deltas: [], mergePartitions }));
  for (const d of batch.deltas) (out[mergePartitionOf(d.service, mergePartitions)] as PartialBatch).deltas.push(d);
  return out;
}
