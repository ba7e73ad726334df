/**
 * Fuzz: thousands of malformed requests (wrong types, NaN and huge numbers, 2038 timestamps, deep
 * nesting, invalid UTF-8, truncated gzip, corrupt protobuf, wrong content types) against a real
 * ingest and nats-server. Each gets a 4xx whose message names the problem; the process stays up;
 * nothing of a refused request reaches TM_EVENTS. A future (2038, in ms) ts on an otherwise valid
 * event is not an error: ingest clamps it to ingest_ts and counts it (docs/ingest.md,
 * "`POST /v1/events`"), which is checked too.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { serverSpans } from "./otlp-spans.js";
import { startIngestFixture, type IngestFixture } from "./ingest-fixture.js";

const RUNS = 700;
/** ~15 s on an idle machine; generous so a loaded shared machine does not fail it spuriously. */
const FUZZ_TIMEOUT_MS = 120_000;
const Y2038_MS = 2_147_483_648_000;
const Y2038_S = 2_147_483_648;

const bad = (record: unknown, field: string): [unknown, string] => [record, field];

/** What ingest's per-record message says for each field: what the value must be (docs/ingest.md). */
const FIELD_RULE: Record<string, RegExp> = {
  service:
    /^(is required: a non-empty string|must be a string, got \w+|must not be empty|is \d+ characters; at most 256 are allowed)$/,
  status: /^must be an HTTP status, a whole number from 100 to 599, got /,
  latency_ms: /^must be a number of ms from 0 to 86400000, got /,
  ts: /^(must be a finite number of ms since epoch|must be ms since epoch or an RFC 3339 time such as 2026-12-01T07:00:00Z, got .*|must be a number \(ms since epoch\) or an RFC 3339 string|".*" is not a valid date|-?\d+ is older than the max age of 86400000 ms before ingest time \d+( \(it looks like seconds: send milliseconds\))?)$/,
  user: /^(must be a string, got \w+|is \d+ characters; at most 256 are allowed)$/,
  "(record)": /^must be a JSON object, got (an array|null|number|string|boolean)$/,
};

/** A record that is always invalid, with the field at fault. */
const invalidRecord: fc.Arbitrary<[unknown, string]> = fc.oneof(
  fc
    .oneof(
      fc.constant(undefined),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(""),
      fc.string({ minLength: 257, maxLength: 300 }),
      fc.array(fc.string(), { maxLength: 2 }),
    )
    .map((service) => bad({ service, route: "/a" }, "service")),
  // noNaN: JSON.stringify writes NaN as null, which ingest reads as an absent status (valid, 200).
  fc
    .oneof(
      fc.double({ noInteger: true, noNaN: true, min: 100, max: 599 }),
      fc.integer({ min: 600 }),
      fc.integer({ max: 99 }),
      fc.string(),
      fc.constant(1e308),
    )
    .map((status) => bad({ service: "fz", status }, "status")),
  fc
    .oneof(
      fc.double({ min: -1e308, max: -Number.MIN_VALUE, noNaN: true, noDefaultInfinity: true }),
      fc.constant(1e300),
      fc.string(),
      fc.constant(86_400_001),
    )
    .map((latency_ms) => bad({ service: "fz", latency_ms }, "latency_ms")),
  fc
    .oneof(
      fc.constant(Y2038_S),
      fc.integer({ min: -1e15, max: 1e9 }),
      fc.string({ maxLength: 30 }),
      fc.constant("2038-01-19T03:14:08"),
      fc.object({ maxDepth: 1 }),
    )
    .map((ts) => bad({ service: "fz", ts }, "ts")),
  fc
    .oneof(fc.integer(), fc.boolean(), fc.string({ minLength: 257, maxLength: 270 }))
    .map((user) => bad({ service: "fz", user }, "user")),
  fc
    .oneof(fc.integer(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.string())
    .map((r) => bad(r, "(record)")),
);

const NO_VALID = /^TM_INGEST_NO_VALID_EVENTS: no event in the request is valid: see errors$/;

const wrongType = fc.constantFrom(
  "text/plain",
  "application/xml",
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "image/png",
  "application/octet-stream",
);

/** ExportTraceServiceRequests of 1..5 server spans, encoded by the OpenTelemetry JS serializer. */
async function protobufRequests(): Promise<Uint8Array[]> {
  const now = Date.now();
  const out: Uint8Array[] = [];
  for (let n = 1; n <= 5; n++)
    out.push(
      ProtobufTraceSerializer.serializeRequest(
        await serverSpans(
          "fz-otlp",
          Array.from({ length: n }, () => now),
        ),
      ) as Uint8Array,
    );
  return out;
}

function validNdjson(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ service: "fz-valid", latency_ms: i })).join("\n");
}

/** A refused request as the client reads it: the stable code and the message, parsed from the body. */
interface Refusal {
  status: number;
  code: string;
  message: string;
  /** /v1/events only: the whole JSON body (per-record errors of a 400 with no valid event). */
  body: { accepted?: number; rejected?: number; errors?: { index: number; field: string; message: string }[] };
}

/**
 * /v1/events answers `{error: {code, message}}`; /v1/traces a google.rpc.Status (JSON or protobuf,
 * as the request) with gRPC code 3 (INVALID_ARGUMENT) and the message "<code>: <message>".
 */
function refusalOf(path: string, type: string | null, bytes: Buffer, status: number): Refusal {
  if (path === "/v1/events") {
    expect(type).toMatch(/^application\/json/);
    const body = JSON.parse(bytes.toString("utf8")) as Refusal["body"] & { error: { code: string; message: string } };
    return { status, code: body.error.code, message: body.error.message, body };
  }
  let rpc: { code: number; message: string };
  if (type?.startsWith("application/json")) rpc = JSON.parse(bytes.toString("utf8")) as typeof rpc;
  else {
    expect(type).toMatch(/^application\/x-protobuf/);
    // google.rpc.Status: field 1 varint code, field 2 length-delimited message (a short one here).
    expect([bytes[0], bytes[2]]).toEqual([0x08, 0x12]);
    const len = bytes[3] as number;
    const at = len < 0x80 ? 4 : 5;
    rpc = { code: bytes[1] as number, message: bytes.toString("utf8", at, bytes.length) };
  }
  expect(rpc.code).toBe(3);
  const m = /^(TM_INGEST_[A-Z_]+): (.+)$/s.exec(rpc.message);
  expect(m, rpc.message).not.toBeNull();
  return { status, code: (m as RegExpExecArray)[1] as string, message: (m as RegExpExecArray)[2] as string, body: {} };
}

describe("fuzzing ingest with malformed requests", () => {
  let fx: IngestFixture;
  beforeAll(async () => {
    fx = await startIngestFixture();
  });
  afterAll(async () => {
    await fx?.close();
  });

  async function expect4xx(
    path: string,
    body: string | Uint8Array,
    type: string | undefined,
    headers: Record<string, string> = {},
  ): Promise<Refusal> {
    const res = await fetch(fx.ingest.url + path, {
      method: "POST",
      body,
      headers: {
        authorization: `Bearer test-token-0123456789`,
        ...(type === undefined ? {} : { "content-type": type }),
        ...headers,
      },
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString("utf8");
    expect(res.status, text).toBeGreaterThanOrEqual(400);
    expect(res.status, text).toBeLessThan(500);
    return refusalOf(path, res.headers.get("content-type"), bytes, res.status);
  }

  it(
    "refuses bodies whose every record is invalid, naming each record's field",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(invalidRecord, { minLength: 1, maxLength: 6 }),
          fc.constantFrom("ndjson", "array", "object"),
          async (records, shape) => {
            const list = records.map(([r]) => r);
            const body =
              shape === "ndjson"
                ? list.map((r) => JSON.stringify(r) ?? "undefined").join("\n")
                : JSON.stringify(shape === "array" ? list : { events: list });
            const r = await expect4xx(
              "/v1/events",
              body,
              shape === "ndjson" ? "application/x-ndjson" : "application/json",
            );
            expect([r.status, r.code, r.message]).toEqual([
              400,
              "TM_INGEST_NO_VALID_EVENTS",
              "no event in the request is valid: see errors",
            ]);
            expect([r.body.accepted, r.body.rejected]).toEqual([0, records.length]);
            // Every record is reported, in order, with the field at fault and what it must be.
            const errors = r.body.errors ?? [];
            expect(errors.map((e) => [e.index, e.field])).toEqual(records.map(([, f], i) => [i, f]));
            for (const e of errors) expect(e.message).toMatch(FIELD_RULE[e.field] as RegExp);
          },
        ),
        { numRuns: RUNS },
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "refuses text that is not JSON, deep nesting, invalid UTF-8 and truncated gzip, naming the problem",
    async () => {
      const notJson = fc
        .oneof(
          fc.constant('{"service":"a","ts":NaN}'),
          fc.constant('[{"service":"a",}]'),
          fc.string({ minLength: 1, maxLength: 40 }).filter((s) => {
            try {
              JSON.parse(s);
              return false;
            } catch {
              return true;
            }
          }),
          fc.integer({ min: 1, max: 100 }).map((n) => validNdjson(3).slice(0, -n).replace(/\n/g, "")),
        )
        .map((s) => ({
          body: s as string | Uint8Array,
          type: "application/json",
          headers: {},
          // A cut that leaves one whole object is JSON, but not an array of events.
          expect:
            /^(TM_INGEST_BAD_JSON: body is not valid JSON: .+|TM_INGEST_BAD_SHAPE: a JSON body must be an array of events or an object \{ "events": \[\.\.\.\] \})$/s,
          errors: undefined as [string, RegExp][] | undefined,
        }));
      const hugeNumbers = fc
        .constantFrom<[string, string, RegExp]>(
          ['{"service":"a","ts":1e400}', "ts", /^must be a finite number of ms since epoch$/],
          ['{"service":"a","latency_ms":1e400}', "latency_ms", /^must be a number of ms from 0 to 86400000, got null$/],
          [
            '{"service":"a","status":-1e400}',
            "status",
            /^must be an HTTP status, a whole number from 100 to 599, got null$/,
          ],
          ['{"service":"a","ts":1e999,"status":200}', "ts", /^must be a finite number of ms since epoch$/],
        )
        .map(([s, field, rule]) => ({
          body: s as string | Uint8Array,
          type: "application/x-ndjson",
          headers: {},
          expect: NO_VALID,
          errors: [[field, rule]] as [string, RegExp][] | undefined,
        }));
      const deep = fc.integer({ min: 2, max: 20_000 }).map((d) => ({
        body: "[".repeat(d) + "]".repeat(d),
        type: "application/json",
        headers: {},
        // An array holding one (nested) array: one record, which is not an object.
        expect: NO_VALID,
        errors: [["(record)", /^must be a JSON object, got an array$/]] as [string, RegExp][] | undefined,
      }));
      const deepObj = fc.integer({ min: 2, max: 20_000 }).map((d) => ({
        body: '{"events":'.repeat(d) + "1" + "}".repeat(d),
        type: "application/json",
        headers: {},
        expect: /^TM_INGEST_BAD_SHAPE: a JSON body must be an array of events or an object \{ "events": \[\.\.\.\] \}$/,
        errors: undefined as [string, RegExp][] | undefined,
      }));
      const badUtf8 = fc
        .tuple(
          fc.integer({ min: 0, max: 200 }),
          fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x28, 0x8c, 0xbc], [0xed, 0xa0, 0x80]),
        )
        .map(([at, bytes]) => {
          const valid = Buffer.from(validNdjson(5));
          const i = at % valid.length;
          return {
            body: Buffer.concat([valid.subarray(0, i), Buffer.from(bytes), valid.subarray(i)]) as Uint8Array,
            type: "application/x-ndjson",
            headers: {},
            expect: /^TM_INGEST_BAD_UTF8: body is not valid UTF-8: encode text as UTF-8$/,
            errors: undefined as [string, RegExp][] | undefined,
          };
        });
      const truncatedGzip = fc
        .tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 200 }))
        .map(([n, cut]) => {
          const gz = gzipSync(validNdjson(n));
          return {
            body: gz.subarray(0, Math.max(0, gz.length - cut)) as Uint8Array,
            type: "application/x-ndjson",
            headers: { "content-encoding": "gzip" },
            expect:
              /^TM_INGEST_BAD_GZIP: body is not valid gzip \(.+\): send the complete gzip stream or drop Content-Encoding$/s,
            errors: undefined as [string, RegExp][] | undefined,
          };
        });
      await fc.assert(
        fc.asyncProperty(fc.oneof(notJson, hugeNumbers, deep, deepObj, badUtf8, truncatedGzip), async (c) => {
          const r = await expect4xx("/v1/events", c.body, c.type, c.headers);
          expect(r.status).toBe(400);
          expect(`${r.code}: ${r.message}`).toMatch(c.expect);
          if (c.errors === undefined) expect(r.body.errors).toBeUndefined();
          else {
            expect(r.body.errors?.map((e) => [e.index, e.field])).toEqual(c.errors.map(([f], i) => [i, f]));
            r.body.errors?.forEach((e, i) => expect(e.message).toMatch((c.errors?.[i] as [string, RegExp])[1]));
          }
        }),
        { numRuns: RUNS * 2 },
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "refuses wrong content types and content encodings with 415 on both endpoints",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(wrongType, fc.constant(undefined)),
          fc.constantFrom("/v1/events", "/v1/traces"),
          fc.option(fc.constantFrom("br", "deflate", "compress")),
          async (type, path, encoding) => {
            const headers: Record<string, string> = encoding ? { "content-encoding": encoding } : {};
            const ctype = encoding && type === undefined ? "application/json" : type;
            const r = await expect4xx(path, Buffer.from(validNdjson(2)), ctype, headers);
            expect(r.status).toBe(415);
            const send =
              path === "/v1/events"
                ? "application/x-ndjson or application/json"
                : "application/x-protobuf or application/json";
            expect(`${r.code}: ${r.message}`).toBe(
              encoding && type === undefined
                ? `TM_INGEST_UNSUPPORTED_ENCODING: Content-Encoding "${encoding}" is not supported: send gzip or identity`
                : `TM_INGEST_UNSUPPORTED_MEDIA_TYPE: Content-Type "${ctype ?? ""}" is not accepted on ${path}: send ${send}`,
            );
          },
        ),
        { numRuns: Math.floor(RUNS / 3) },
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  const PROTOBUF = /^TM_INGEST_BAD_PROTOBUF: body is not a valid ExportTraceServiceRequest protobuf \(.+\)$/s;

  it(
    "refuses corrupt OTLP protobuf and malformed OTLP JSON with 400",
    async () => {
      const valid = await protobufRequests();
      const truncated = fc
        .tuple(fc.integer({ min: 0, max: valid.length - 1 }), fc.integer({ min: 1, max: 40 }))
        .map(([n, cut]) => {
          const bytes = valid[n] as Uint8Array;
          return {
            body: bytes.subarray(0, Math.max(1, bytes.length - cut)),
            type: "application/x-protobuf",
            expect: PROTOBUF,
          };
        });
      const badWire = fc
        .tuple(fc.integer({ min: 0, max: valid.length - 1 }), fc.constantFrom(6, 7))
        .map(([n, wire]) => {
          const bytes = Uint8Array.from(valid[n] as Uint8Array);
          bytes[0] = (1 << 3) | wire;
          return { body: bytes, type: "application/x-protobuf", expect: PROTOBUF };
        });
      const badJson = fc
        .oneof(
          fc.constantFrom(
            '{"resourceSpans": 5}',
            '{"resourceSpans": [1]}',
            '{"resourceSpans": [{"scopeSpans": "x"}]}',
            "[]",
            "null",
            "{",
            '{"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}',
          ),
          fc.integer({ min: 2, max: 5000 }).map((d) => '{"resourceSpans":' + "[".repeat(d) + "]".repeat(d) + "}"),
        )
        .map((body) => ({
          body: body as string | Uint8Array,
          type: "application/json",
          expect:
            /^(TM_INGEST_BAD_JSON: body is not valid JSON: .+|TM_INGEST_BAD_SHAPE: (body must be an ExportTraceServiceRequest object with resourceSpans|resourceSpans must be an array|each resourceSpans entry must be an object|resourceSpans\[\]\.scopeSpans must be an array|scopeSpans\[\]\.spans must be an array))$/s,
        }));
      await fc.assert(
        fc.asyncProperty(fc.oneof(truncated, badWire, badJson), async (c) => {
          const r = await expect4xx("/v1/traces", c.body, c.type);
          expect(r.status).toBe(400);
          expect(`${r.code}: ${r.message}`).toMatch(c.expect);
        }),
        { numRuns: RUNS },
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "clamps 2038 (ms) timestamps on otherwise valid events instead of storing them; stores nothing of any refused request",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 1e6 }), async (offset) => {
          const res = await fx.post(
            "/v1/events",
            JSON.stringify([{ service: "fz-2038", ts: Y2038_MS + offset }]),
            "application/json",
          );
          expect(await res.json()).toMatchObject({ accepted: 1, clamped: 1 });
        }),
        { numRuns: 50 },
      );
      expect((await fetch(fx.ingest.url + "/healthz")).status).toBe(200);
      const { events } = await fx.readStream();
      expect(events.filter((e) => e.service !== "fz-2038")).toEqual([]);
      expect(events).toHaveLength(50);
      for (const e of events) expect(e.ts).toBe(e.ingest_ts);
    },
    FUZZ_TIMEOUT_MS,
  );
});
