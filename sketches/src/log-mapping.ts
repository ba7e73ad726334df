import { invalidOption } from "./errors.js";

/**
 * DDSketch's index mapping (Masson, Rim, Lee 2019) with the logarithm replaced by a cubic
 * interpolation of log2 between powers of two, as DataDog's CubicallyInterpolatedMapping does:
 * L(v) = e + P(s) for v = 2^e·(1+s), with P(s) = ((A·s + B)·s + C)·s, P(0) = 0, P(1) = 1 and
 * P' > 0. L costs a few multiplications on the float's bits instead of Math.log.
 *
 * Keys are ⌈L(v)·multiplier⌉. A key's bin spans L-width 1/multiplier; its values span a ratio of at
 * most exp(K/multiplier) where K = max over s of 1/((1+s)·P'(s)) (= 0.7, at s = 0), so
 * multiplier = K / ln γ with γ = (1+α)/(1−α) keeps every bin within ratio γ (about 1 % more bins
 * than the exact logarithm). The reported value 2·lo·hi/(lo+hi) of a bin (lo, hi] is then within
 * α of every value in it (for normal doubles, ≥ 2.2e-308; subnormals have less precision than α).
 */
const A = 6 / 35;
const B = -3 / 5;
const C = 10 / 7;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = littleEndian ? 1 : 0;
const LO = littleEndian ? 0 : 1;
const TWO_POW_MINUS_52 = 2 ** -52;
/** Smallest normal double: below it the exponent field no longer gives 2^e. */
const MIN_NORMAL = 2 ** -1022;

/** K = max over s ∈ [0, 1] of 1 / ((1+s)·P'(s)), computed once (sampled densely, incl. both ends). */
const K = (() => {
  let k = 0;
  for (let i = 0; i <= 100_000; i++) {
    const s = i / 100_000;
    const slope = (3 * A * s + 2 * B) * s + C;
    k = Math.max(k, 1 / ((1 + s) * slope));
  }
  return k * (1 + 1e-9);
})();

/** The interpolated log2 of a positive finite value. */
export function approxLog2(value: number): number {
  if (value < MIN_NORMAL) return approxLog2(value * 2 ** 64) - 64;
  f64[0] = value;
  const hi = u32[HI] as number;
  const s = ((hi & 0xfffff) * 4294967296 + (u32[LO] as number)) * TWO_POW_MINUS_52;
  return (hi >>> 20) - 1023 + ((A * s + B) * s + C) * s;
}

/** Inverse of approxLog2: the value whose interpolated log2 is `l`. */
export function approxExp2(l: number): number {
  const e = Math.floor(l);
  const f = l - e;
  // Solve P(s) = f on [0, 1): P is increasing and close to the identity, so Newton converges fast.
  let s = f;
  // Converges quadratically: once a step is ≤ 1e-15 the error left is below float rounding
  // (3–4 steps; a tighter bound would spin on rounding noise).
  for (let i = 0; i < 10; i++) {
    const step = (((A * s + B) * s + C) * s - f) / ((3 * A * s + 2 * B) * s + C);
    s -= step;
    if (Math.abs(step) <= 1e-15) break;
  }
  return Math.pow(2, e) * (1 + s);
}

/**
 * Keys memoized per mapping: at α = 0.01 (35 keys per octave) ±4096 keys span values from 2^-117
 * to 2^117 ms, every latency there is; 64 KiB per accuracy in use.
 */
const MEMO_KEYS = 4096;

export class LogMapping {
  readonly relativeAccuracy: number;
  /** Keys per unit of interpolated log2. */
  readonly multiplier: number;

  /** value(key) of keys in ±MEMO_KEYS, computed once each (NaN: not yet): a pane asks for five. */
  private readonly memo: Float64Array;

  private constructor(relativeAccuracy: number) {
    this.relativeAccuracy = relativeAccuracy;
    this.multiplier = K / Math.log((1 + relativeAccuracy) / (1 - relativeAccuracy));
    this.memo = new Float64Array(2 * MEMO_KEYS + 1).fill(NaN);
  }

  private static readonly cache = new Map<number, LogMapping>();

  /** One shared mapping per accuracy: sketches hold a reference, not a copy. */
  static of(relativeAccuracy: number): LogMapping {
    let m = LogMapping.cache.get(relativeAccuracy);
    if (m === undefined) {
      if (!(relativeAccuracy >= 1e-4 && relativeAccuracy <= 0.5)) {
        throw invalidOption("relativeAccuracy", relativeAccuracy, "a number in [0.0001, 0.5] (default 0.01)");
      }
      m = new LogMapping(relativeAccuracy);
      // Bounded: decoding arbitrary accuracies must not grow it without limit.
      if (LogMapping.cache.size < 16) LogMapping.cache.set(relativeAccuracy, m);
    }
    return m;
  }

  /** Key of a positive finite value. */
  key(value: number): number {
    return Math.ceil(approxLog2(value) * this.multiplier);
  }

  /** The value reported for a key: within α of everything its bin holds. */
  value(key: number): number {
    const i = key + MEMO_KEYS;
    if (i >= 0 && i < this.memo.length) {
      const v = this.memo[i] as number;
      if (v === v) return v;
      return (this.memo[i] = this.compute(key));
    }
    return this.compute(key);
  }

  private compute(key: number): number {
    const lo = approxExp2((key - 1) / this.multiplier);
    const hi = Math.min(Number.MAX_VALUE, approxExp2(key / this.multiplier));
    // 2·lo·hi/(lo+hi), written so that neither the product nor a reciprocal overflows.
    return Math.min(Number.MAX_VALUE, lo * (2 / (1 + lo / hi)));
  }
}
