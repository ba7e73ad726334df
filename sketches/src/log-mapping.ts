import { invalidOption } from "./errors.js";

/**
 * The logarithmic index mapping of DDSketch (Masson, Rim, Lee 2019): bin k holds (γ^(k−1), γ^k]
 * with γ = (1+α)/(1−α), and its representative 2γ^k/(γ+1) is within α of every value in the bin.
 */
export class LogMapping {
  readonly relativeAccuracy: number;
  readonly gamma: number;
  /** 1 / ln γ, so key(v) = ceil(ln v · multiplier). */
  readonly multiplier: number;

  private constructor(relativeAccuracy: number) {
    this.relativeAccuracy = relativeAccuracy;
    this.gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy);
    this.multiplier = 1 / Math.log(this.gamma);
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
    return Math.ceil(Math.log(value) * this.multiplier);
  }

  /** The value reported for a key: within α of everything the bin holds. */
  value(key: number): number {
    return (2 * Math.pow(this.gamma, key)) / (this.gamma + 1);
  }

  /** Smallest value that can fall into a key (exclusive bound). */
  lowerBound(key: number): number {
    return Math.pow(this.gamma, key - 1);
  }

  upperBound(key: number): number {
    return Math.pow(this.gamma, key);
  }
}
