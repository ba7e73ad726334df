/**
 * Random panes and late records for the pane encodings' tests (json-lines.test.ts,
 * pane-records.test.ts): every field, the special numbers JSON writes oddly and the strings it
 * escapes. Deterministic (the core's PRNG), so a failure names its seed.
 */
import type { LateRecord, Pane } from "../../protocol.js";
import { Prng } from "../../core/prng.js";

/** Deterministic (the core's PRNG), so a failure names its seed. */
function rng(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}

export const SPECIAL_NUMBERS = [
  NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  1e21,
  1e-7,
  -1e-7,
  5e-324,
  Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 31,
  -(2 ** 31),
  1_767_225_600_000,
  0.1 + 0.2,
  123.456,
];
export const SPECIAL_STRINGS = [
  "",
  "checkout",
  "zahlungs-dienst-ü",
  "服务",
  "emoji 🚀 svc",
  'quo"te',
  "back\\slash",
  "new\nline\ttab\r\u0000\u001f\u007f",
  "\u2028\u2029",
  "lone \ud800 high",
  "lone \udc00 low",
  "pair \ud83d\ude80",
  "GET /api/r5?x=1&y=<2>",
];

export function gen(seed: number): {
  num(): number;
  str(): string;
  maybe<T>(v: T): T | undefined;
  pick<T>(xs: T[]): T;
} {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)] as T;
  return {
    pick,
    num: () => {
      const k = r();
      if (k < 0.2) return pick(SPECIAL_NUMBERS);
      if (k < 0.5) return Math.floor((r() - 0.5) * 2 ** (1 + Math.floor(r() * 53)));
      if (k < 0.8) return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
      return Math.round(r() * 1e6) / 1000;
    },
    str: () => {
      if (r() < 0.6) return pick(SPECIAL_STRINGS);
      let s = "";
      const n = Math.floor(r() * 12);
      for (let i = 0; i < n; i++) s += String.fromCharCode(Math.floor(r() < 0.7 ? 32 + r() * 95 : r() * 0xffff));
      return s;
    },
    maybe: <T>(v: T): T | undefined => (r() < 0.5 ? v : undefined),
  };
}

export function randomPane(seed: number): Pane {
  const g = gen(seed);
  const n = (): number | null => (g.maybe(1) === undefined ? null : g.num());
  const bias = {
    countPct: n(),
    errorRatePp: n(),
    p99Pct: n(),
    usersPct: n(),
    windows: g.num(),
    spread: g.maybe({ countPct: n(), errorRatePp: n(), p99Pct: n(), usersPct: n() }),
    stage: g.maybe(g.pick(["early", "on-time", "late", "final"] as const)),
    age: g.maybe("0-0.25" as const),
    scope: g.maybe(g.pick(["service", "policy"] as const)),
    provisional: g.maybe(g.num() > 0),
  };
  const value = () => ({
    count: g.num(),
    errors: g.num(),
    errorRate: g.num(),
    p50: g.num(),
    p90: g.num(),
    p95: g.num(),
    p99: g.num(),
    p999: g.num(),
    users: g.num(),
  });
  const service = g.str();
  const pane: Pane = {
    id: `${g.str()}|${service}|10000|${g.num()}`,
    seq: g.num(),
    kind: g.pick(["early", "on-time", "late", "final", "retract"] as const),
    policy: g.str(),
    key: g.pick([{ service }, { service, route: g.str() }, { service, user: g.str() }]),
    window: { start: g.num(), end: g.num() },
    value: value(),
    watermark: g.num(),
    emittedAt: g.num(),
    emitDelayMs: g.num(),
    pipelineLagMs: g.num(),
    lateAccepted: g.num(),
    dropped: g.num(),
    bias,
  };
  const nowcast = g.maybe({
    value: { count: g.num(), errorRate: g.num(), p99: g.num(), users: g.num() },
    spread: { count: n(), errorRate: n(), p99: n(), users: n() },
    error: {
      countPct: n(),
      errorRatePp: n(),
      p99Pct: n(),
      usersPct: n(),
      windows: g.num(),
      spread: g.maybe(bias.spread),
    },
  });
  if (nowcast) pane.nowcast = nowcast as Pane["nowcast"];
  const sessions = g.maybe({ events: g.num() });
  if (sessions) pane.sessions = sessions;
  return pane;
}

export function randomLate(seed: number): LateRecord {
  const g = gen(seed);
  const r: LateRecord = {
    policy: g.str(),
    reason: "behind-watermark",
    event: {
      ts: g.num(),
      ingest_ts: g.num(),
      service: g.str(),
      route: g.str(),
      status: g.num(),
      latency_ms: g.num(),
      user: g.str(),
    },
    window: { start: g.num(), end: g.num() },
    watermark: g.num(),
  };
  const session = g.maybe(g.str());
  if (session !== undefined) r.session = session;
  return r;
}

/**
 * A record with every value JSON writes oddly: what it leaves out of objects and writes as null in
 * arrays, a Date, `toJSON` (kept and dropped), boxed primitives, integer keys (written first) and a
 * null-prototype object.
 */
export function oddValuesRecord(): Record<string, unknown> {
  return {
    u: undefined,
    f: () => 1,
    s: Symbol("x"),
    arr: [undefined, () => 1, Symbol("y"), null, 1, "x", [], {}, [[-0]]],
    date: new Date(1_767_225_600_000),
    own: { toJSON: () => ({ was: "toJSON" }) },
    gone: { toJSON: () => undefined },
    boxed: [new Number(3), new String("s"), new Boolean(false)],
    "2": "integer keys first",
    "1": "ascending",
    nested: { deep: { deeper: { t: true, f: false, z: null } } },
    nullProto: Object.assign(Object.create(null) as object, { a: 1 }),
  };
}
