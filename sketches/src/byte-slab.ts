/**
 * Fixed-size sketch buffers cut from shared chunks (docs/decisions/0049-compact-state.md, "Second
 * pass"): a standalone Uint8Array costs a JSArrayBuffer object (88 B on the heap) and a malloc'd
 * backing store of its own besides its header (96 B); a view into a chunk costs its header only.
 * Used for a dense HyperLogLog's registers (dense-registers.ts: made once, at their final size, and
 * kept until the sketch dies). A chunk is freed by the garbage collector once no view into it is
 * alive: sketches made about the same time (a slice's keys) share chunks and die together. A region
 * is never handed out twice: views start zero-filled, like `new Uint8Array(n)`.
 */

/** Buffers larger than this get one of their own (their headers are then a small part of them). */
export const SLAB_MAX = 2048;
/** Bytes per chunk: small enough that a long-lived sketch pins little besides itself. */
export const CHUNK_BYTES = 16384;

let chunk: ArrayBuffer | null = null;
let used = CHUNK_BYTES;

/** A zero-filled Uint8Array of n bytes: a view into the current chunk when n ≤ SLAB_MAX. */
export function slabBytes(n: number): Uint8Array {
  if (n > SLAB_MAX || n === 0) return new Uint8Array(n);
  if (used + n > CHUNK_BYTES) {
    chunk = new ArrayBuffer(CHUNK_BYTES);
    used = 0;
  }
  const view = new Uint8Array(chunk as ArrayBuffer, used, n);
  used += n;
  return view;
}

/** A copy of `src` from slabBytes (Uint8Array.slice would give it a buffer of its own). */
export function slabCopy(src: Uint8Array): Uint8Array {
  const out = slabBytes(src.length);
  out.set(src);
  return out;
}
