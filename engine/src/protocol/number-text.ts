/**
 * Number text for JsonLines (json-lines.ts): what `String(v)`, and so `JSON.stringify`, writes for a
 * number, from a small cache.
 *
 * Pure: no node:* imports, no clock, no env.
 */

/**
 * The text of numbers seen recently, direct-mapped by their bits: `String(v)` of a double (the
 * shortest text that reads back as `v`) is a costly conversion, and a pane's numbers repeat
 * (timestamps are window bounds and log times, quantiles a sketch's bin values). `===` tells doubles
 * apart exactly but for ±0 and NaN, which never come here, so the text is always `String(v)` of this
 * `v` (docs/decisions/0021-runtime-lean.md).
 */
const TEXT_SLOTS = 4096;
const textKeys = new Float64Array(TEXT_SLOTS).fill(NaN);
const textOf: string[] = new Array<string>(TEXT_SLOTS).fill("");
const bits = new Float64Array(1);
const bitWords = new Uint32Array(bits.buffer);

export function numberText(v: number): string {
  bits[0] = v;
  const slot = (Math.imul((bitWords[0] as number) ^ (bitWords[1] as number), 0x9e3779b1) >>> 20) & (TEXT_SLOTS - 1);
  // An empty slot holds NaN, which equals nothing.
  if (textKeys[slot] === v) return textOf[slot] as string;
  const text = String(v);
  textKeys[slot] = v;
  textOf[slot] = text;
  return text;
}
