/**
 * FNV-1a 32-bit of a string's UTF-16 code units: the hash that places a key on a partition, of
 * TM_EVENTS (docs/ingest.md, "What goes to NATS") and of TM_PARTIALS
 * (docs/decisions/0033-merge-partitions.md). Pure.
 */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
