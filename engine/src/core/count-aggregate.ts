/** Placeholder aggregate: count and errors only (until the sketches land). */
import type { PaneValue } from "../protocol.js";
import type { Aggregate, AggregateKind, UserHash } from "./aggregate.js";
import { ByteReader, ByteWriter } from "./byte-codec.js";

class CountAggregate implements Aggregate {
  count = 0;
  errors = 0;
  add(_latencyMs: number, error: boolean, _user: UserHash): void {
    this.count++;
    if (error) this.errors++;
  }
  merge(o: Aggregate): void {
    this.count += o.count;
    this.errors += o.errors;
  }
  subtract(o: Aggregate): void {
    this.count -= o.count;
    this.errors -= o.errors;
  }
  clone(): Aggregate {
    const c = new CountAggregate();
    c.count = this.count;
    c.errors = this.errors;
    return c;
  }
  value(): PaneValue {
    const errorRate = this.count === 0 ? 0 : this.errors / this.count;
    return { count: this.count, errors: this.errors, errorRate, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, users: 0 };
  }
  encode(): Uint8Array {
    const w = new ByteWriter();
    w.uint(this.count);
    w.uint(this.errors);
    return w.finish();
  }
  heapBytes(): number {
    return 32;
  }
}

export const countAggregates: AggregateKind = {
  create: () => new CountAggregate(),
  decode: (bytes) => {
    const r = new ByteReader(bytes);
    const a = new CountAggregate();
    a.count = r.uint();
    a.errors = r.uint();
    return a;
  },
  hashUser: () => 0,
};
