/**
 * The dense form of a HyperLogLog: 2^p one-byte registers and, kept beside them on every change,
 * the histogram of their values — all Ertl's estimator reads — so an estimate costs O(64), not
 * O(2^p). The histogram is derived state: never encoded, rebuilt on decode.
 */
export class DenseRegisters {
  private constructor(
    readonly regs: Uint8Array,
    /** hist[k] = number of registers holding k, for k = 0 … q + 1 (q = 53 − p); ≤ 2^18, so 4 bytes each. */
    readonly hist: Uint32Array,
  ) {}

  /** All registers 0. */
  static empty(precision: number): DenseRegisters {
    const m = 1 << precision;
    const hist = new Uint32Array(55 - precision);
    hist[0] = m;
    return new DenseRegisters(new Uint8Array(m), hist);
  }

  /** Takes ownership of `regs` and of `hist`, their histogram (length 55 − p; the decoder counts while unpacking). */
  static of(regs: Uint8Array, hist: Uint32Array): DenseRegisters {
    return new DenseRegisters(regs, hist);
  }

  /** Register idx := max(register idx, rank). */
  raise(idx: number, rank: number): void {
    const cur = this.regs[idx] as number;
    if (rank <= cur) return;
    this.regs[idx] = rank;
    this.hist[cur] = (this.hist[cur] as number) - 1;
    this.hist[rank] = (this.hist[rank] as number) + 1;
  }

  /** Register-wise max with another sketch's registers of the same precision. */
  raiseAll(src: Uint8Array): void {
    const regs = this.regs;
    for (let i = 0; i < regs.length; i++) if ((src[i] as number) > (regs[i] as number)) this.raise(i, src[i] as number);
  }

  clone(): DenseRegisters {
    return new DenseRegisters(this.regs.slice(), this.hist.slice());
  }

  /** Bytes held: the registers, the histogram, two typed-array headers and this object. */
  heapBytes(): number {
    return 200 + this.regs.length + 200 + 4 * this.hist.length + 32;
  }
}
