/** The baseline HyperLogLog of the benchmark (no types shipped). */
declare module "hyperloglog32" {
  interface HyperLogLog32 {
    add(value: string): HyperLogLog32;
    count(): number;
    state(): Uint8Array;
    merge(other: HyperLogLog32 | Uint8Array): HyperLogLog32;
  }
  function HyperLogLog(bits: number): HyperLogLog32;
  export = HyperLogLog;
}
