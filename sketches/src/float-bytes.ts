/**
 * Little-endian float64 ⇄ bytes through one shared 8-byte scratch (a DataView per codec call
 * costs ~300 ns; this costs a few). Byte order is fixed to little-endian on any platform.
 */
const f64 = new Float64Array(1);
const bytes = new Uint8Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function writeFloat64(out: Uint8Array, pos: number, x: number): void {
  f64[0] = x;
  if (littleEndian) for (let i = 0; i < 8; i++) out[pos + i] = bytes[i] as number;
  else for (let i = 0; i < 8; i++) out[pos + i] = bytes[7 - i] as number;
}

export function readFloat64(src: Uint8Array, pos: number): number {
  if (littleEndian) for (let i = 0; i < 8; i++) bytes[i] = src[pos + i] as number;
  else for (let i = 0; i < 8; i++) bytes[7 - i] = src[pos + i] as number;
  return f64[0] as number;
}
