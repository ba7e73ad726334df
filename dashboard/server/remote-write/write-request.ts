/**
 * Remote-write 1.0 bodies (docs/remote-write.md, "Wire"): a `prometheus.WriteRequest` protobuf
 * (prompb/remote.proto, types.proto: TimeSeries = labels 1, samples 2; Label = name 1, value 2;
 * Sample = value 1 (double), timestamp 2 (int64 ms)), compressed with snappy's block format.
 */
import protobuf from "protobufjs";
import snappy from "snappyjs";
import type { OutSample } from "./settled-samples.js";

export const REMOTE_WRITE_HEADERS = Object.freeze({
  "content-encoding": "snappy",
  "content-type": "application/x-protobuf",
  "x-prometheus-remote-write-version": "0.1.0",
});

/** The WriteRequest of these samples, one TimeSeries each (a batch holds at most one per series). */
export function encodeWriteRequest(samples: readonly OutSample[]): Uint8Array {
  const w = protobuf.Writer.create();
  for (const s of samples) {
    w.uint32((1 << 3) | 2).fork();
    for (const [name, value] of s.labels) {
      w.uint32((1 << 3) | 2).fork();
      w.uint32((1 << 3) | 2).string(name);
      w.uint32((2 << 3) | 2).string(value);
      w.ldelim();
    }
    w.uint32((2 << 3) | 2).fork();
    w.uint32((1 << 3) | 1).double(s.value);
    w.uint32((2 << 3) | 0).int64(s.ts);
    w.ldelim();
    w.ldelim();
  }
  return w.finish();
}

/** The request body: the WriteRequest, snappy block-compressed. */
export function writeRequestBody(samples: readonly OutSample[]): Uint8Array {
  return snappy.compress(encodeWriteRequest(samples));
}
