import { describe, expect, it } from "vitest";
import { DDSketch } from "@tidemark/sketches";
import type { DeployError } from "../errors.js";
import { makeBatch } from "./batch.js";
import { Delivery } from "./delivery.js";
import type { HttpAnswer } from "./ingest-client.js";
import { AcceptedLedger } from "./ledger.js";
import { emptyCounters } from "./report.js";

type Step = HttpAnswer | Error;

const ok = (rejected: number[] = [], records = 3): HttpAnswer => ({
  status: 200,
  retryAfter: undefined,
  body: JSON.stringify({
    accepted: records - rejected.length,
    rejected: rejected.length,
    clamped: 0,
    errors: rejected.map((index) => ({ index, field: "service", message: "bad" })),
  }),
});
const status = (code: number, retryAfter?: string): HttpAnswer => ({
  status: code,
  retryAfter,
  body: JSON.stringify({ error: { code: "X", message: `answered ${code}` } }),
});

/** A Delivery whose client answers `steps` in turn, recording every attempt's key. */
function rig(steps: Step[], opts: { unreachableAfterMs?: number } = {}) {
  const keys: string[] = [];
  const records: string[] = [];
  const failures: DeployError[] = [];
  const stop = new AbortController();
  const deps = {
    client: {
      post: async (_body: string, key: string): Promise<HttpAnswer> => {
        keys.push(key);
        const step = steps.shift();
        if (step === undefined) throw new Error("no more answers scripted");
        if (step instanceof Error) throw step;
        return step;
      },
    },
    counters: emptyCounters(),
    ledger: new AcceptedLedger(10_000),
    latency: new DDSketch(),
    record: { write: async (chunk: string) => void records.push(chunk) },
    log: () => undefined,
    ingest: "http://127.0.0.1:1",
    startedAt: Date.now(),
    unreachableAfterMs: opts.unreachableAfterMs ?? 60_000,
    stop: stop.signal,
    fail: (err: DeployError) => void failures.push(err),
  };
  return { delivery: new Delivery(deps), deps, keys, records, failures, stop };
}

const T = 1_800_000_000_000;
const batch = makeBatch(
  "load-1-1-0",
  [0, 1, 2].map((i) => ({
    event: {
      ts: T + i * 6000,
      service: "cart",
      route: "GET /api/v1/cart",
      status: i === 2 ? 500 : 200,
      latency_ms: 5,
      user: "u",
    },
    late: false,
  })),
);

describe("Delivery", () => {
  it("resends after a 503 with the same Idempotency-Key and counts the batch once", async () => {
    const r = rig([status(503, "0"), status(429, "0"), ok()]);
    await r.delivery.deliver(batch);
    expect(r.keys).toEqual(["load-1-1-0", "load-1-1-0", "load-1-1-0"]);
    expect(r.deps.counters).toMatchObject({ accepted: 3, retries: 2, http5xx: 1, http4xx: 1, posts: 3, unsent: 0 });
    expect(r.deps.ledger.toJSON().services).toEqual({
      cart: { [String(T)]: { count: 2, errors: 0 }, [String(T + 10_000)]: { count: 1, errors: 1 } },
    });
    expect(r.records.join("").trimEnd().split("\n")).toHaveLength(3);
    expect(r.deps.latency.count).toBe(3);
  });

  it("resends after no answer, with the same key", async () => {
    const r = rig([Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }), ok()]);
    await r.delivery.deliver(batch);
    expect(r.keys).toEqual(["load-1-1-0", "load-1-1-0"]);
    expect(r.deps.counters).toMatchObject({ accepted: 3, retries: 1, connectionErrors: 1, posts: 1 });
  });

  it("leaves the records a 2xx names as rejected out of the counts, the ledger and the record", async () => {
    const r = rig([ok([2])]);
    await r.delivery.deliver(batch);
    expect(r.deps.counters).toMatchObject({ accepted: 2, rejected: 1 });
    expect(r.deps.ledger.toJSON()).toMatchObject({ total: 2, errors: 0, exact: true });
    expect(r.records.join("").trimEnd().split("\n")).toHaveLength(2);
  });

  it.each([400, 413])("counts a %d as refused and never resends it", async (code) => {
    const r = rig([status(code), ok()]);
    await r.delivery.deliver(batch);
    expect(r.keys).toHaveLength(1);
    expect(r.deps.counters).toMatchObject({ refused: 3, accepted: 0, http4xx: 1, retries: 0 });
    expect(r.failures).toEqual([]);
  });

  it.each([401, 415])("stops the run on a %d with TM_LOAD_REFUSED", async (code) => {
    const r = rig([status(code)]);
    await r.delivery.deliver(batch);
    expect(r.failures.map((f) => f.code)).toEqual(["TM_LOAD_REFUSED"]);
    expect(r.failures[0]?.message).toContain(String(code));
    expect(r.deps.counters).toMatchObject({ unsent: 3, http4xx: 1, retries: 0 });
  });

  it("stops the run with TM_LOAD_UNREACHABLE when ingest never answered", async () => {
    const r = rig([Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })], {
      unreachableAfterMs: 0,
    });
    await r.delivery.deliver(batch);
    expect(r.failures.map((f) => f.code)).toEqual(["TM_LOAD_UNREACHABLE"]);
    expect(r.deps.counters).toMatchObject({ unsent: 3, connectionErrors: 1 });
  });

  it("gives a batch up as unsent once the run stops", async () => {
    const r = rig([status(503, "0")]);
    r.stop.abort();
    await r.delivery.deliver(batch);
    expect(r.keys).toEqual([]);
    expect(r.deps.counters.unsent).toBe(3);
  });
});
