import { describe, expect, it, vi } from "vitest";
import { encodePaneBatch, PaneRecords, type Pane } from "@tidemark/engine/protocol";
import { compressPaneBody, decodePaneBody } from "@tidemark/engine/nats";
import { testPane } from "../protocol/pane.fixture.js";
import { pino } from "pino";
import { Registry } from "prom-client";
import { alertMetrics } from "./alerts/alert-metrics.js";
import { parseAlerts, scopeOf } from "./alerts/alerts-config.js";
import { startAlerting } from "./alerts/alerting.js";
import { resolveConfig } from "./config.js";
import { createFanout } from "./fanout.js";
import { dashboardMetrics } from "./metrics.js";
import { readPaneBody } from "./pane-body-read.js";
import { PaneSamples } from "./prom/pane-samples.js";
import { PaneStore } from "./pane-store.js";

/** Panes with every optional part: routes, the all-services key, nowcasts, NaN and an escaped string. */
function panes(n: number): Pane[] {
  const out: Pane[] = [];
  for (let i = 0; i < n; i++) {
    const p = testPane({
      service: i % 7 === 0 ? "*" : `svc-"${i % 5}"\n`,
      ...(i % 3 === 0 ? { route: `/r/${i % 4}` } : {}),
      start: i * 10_000,
      seq: i % 4,
      kind: (["early", "on-time", "late", "final", "retract"] as const)[i % 5],
      count: i,
      errors: i % 3,
      bias: { countPct: i % 2 ? 1.25 : null, errorRatePp: -0.5, p99Pct: NaN, usersPct: null, windows: i },
      ...(i % 4 === 0
        ? {
            nowcast: {
              value: { count: i + 0.5, errorRate: 0.1, p99: 400, users: -0 },
              spread: { count: null, errorRate: 0.01, p99: Infinity, users: 1 },
            } as Pane["nowcast"],
          }
        : {}),
    });
    out.push(p);
  }
  return out;
}

function binaryBody(records: readonly object[]): Uint8Array {
  const w = new PaneRecords();
  for (const r of records) w.add(r);
  return w.body();
}

const utf8 = new TextEncoder();
const jsonOf = (b: ReturnType<typeof readPaneBody>) => b.panes.map((p) => p.json ?? JSON.stringify(p.pane));

describe("readPaneBody", () => {
  const ps = panes(200);
  const lines = ps.map((p) => JSON.stringify(p));

  it("decodes a binary body once to panes whose JSON is the engine decoder's text, gzip or not", () => {
    for (const body of [binaryBody(ps), compressPaneBody(binaryBody(ps))]) {
      const read = readPaneBody(body);
      expect(read.rejected).toEqual([]);
      // Binary bodies carry no text: it is written only when a pane is sent.
      expect(read.panes.every((p) => p.json === undefined)).toBe(true);
      expect(jsonOf(read)).toEqual(decodePaneBody(body));
      expect(jsonOf(read)).toEqual(lines);
    }
  });

  it("keeps an NDJSON body's lines as they are, byte for byte, gzip or not", () => {
    // Spacing the engine never writes: the line, not a re-stringified pane, is what is kept.
    const spaced = lines.map((l, i) => (i % 2 ? l.replace(`"seq":`, `"seq" : `) : l));
    const text = utf8.encode(encodePaneBatch(spaced));
    for (const body of [text, compressPaneBody(text)]) {
      const read = readPaneBody(body);
      expect(read.panes.map((p) => p.json)).toEqual(spaced);
      expect(read.panes.map((p) => p.pane)).toEqual(spaced.map((l) => JSON.parse(l)));
    }
  });

  it("rejects records that are not panes, naming why, and reads the rest", () => {
    const text = utf8.encode(encodePaneBatch([lines[0] as string, "{not json", `{"id":"x"}`, lines[1] as string]));
    const read = readPaneBody(text);
    expect(read.panes.map((p) => p.pane.id)).toEqual([ps[0]?.id, ps[1]?.id]);
    expect(read.rejected).toHaveLength(2);
    expect(read.rejected[0]).toMatch(/^not JSON: /);
    expect(read.rejected[1]).toBe("missing id, seq, policy, key.service, window or value");
    const late = { policy: "p", reason: "behind-watermark", window: { start: 0, end: 1 }, watermark: 1 };
    expect(readPaneBody(binaryBody([ps[2] as Pane, late])).rejected).toEqual([
      "missing id, seq, policy, key.service, window or value",
    ]);
  });

  it("refuses a body of a newer version naming it, as the engine's decoder does", () => {
    const body = binaryBody(ps.slice(0, 3));
    body[4] = 9;
    expect(() => readPaneBody(body)).toThrow(/version 9 is newer than this reader/);
    expect(() => decodePaneBody(body)).toThrow(/version 9 is newer than this reader/);
  });
});

describe("PaneStore's JSON of a decoded pane", () => {
  it("is written once, when first asked for, and is the engine decoder's text", () => {
    const ps = panes(50);
    const body = binaryBody(ps);
    const store = new PaneStore(1000);
    const read = readPaneBody(body).panes;
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      const stored = read.map((p) => store.upsert(p.pane, p.json));
      expect(stringify).toHaveBeenCalledTimes(0);
      const texts = stored.map((s) => s?.json);
      expect(stored.map((s) => s?.json)).toEqual(texts);
      expect(stringify).toHaveBeenCalledTimes(ps.length);
      expect(texts).toEqual(decodePaneBody(body));
    } finally {
      stringify.mockRestore();
    }
  });
});

describe("a decoded pane stays as it was decoded", () => {
  it("is not changed by the store, the fan-out to a client, the Prometheus series or the alert rules (its JSON is written from it later)", async () => {
    const deepFreeze = <T>(o: T): T => {
      if (typeof o === "object" && o !== null) for (const v of Object.values(o)) deepFreeze(v);
      return Object.freeze(o);
    };
    const body = binaryBody(panes(200));
    const fanout = createFanout(resolveConfig({ logLevel: "silent" }), dashboardMetrics());
    const samples = new PaneSamples({ windowsPerSeries: 1000, maxWindows: 100_000, discardingPolicies: [] });
    fanout.store.observe((p) => samples.apply(p));
    const pending: Array<() => void> = [];
    const rules = parseAlerts(
      {
        alertmanagers: [],
        rules: [{ alert: "Errors", expr: 'tidemark_error_ratio{policy="dashboard", window="10s"} > 0.01' }],
      },
      scopeOf({}, "config"),
      "config",
    );
    const timers = { setTimeout: (fn: () => void) => pending.push(fn), clearTimeout: () => undefined };
    const alerting = startAlerting(
      rules,
      "http://dash",
      samples,
      alertMetrics(new Registry(), ["Errors"], []),
      pino({ level: "silent" }),
      timers,
    );
    fanout.store.observe((p) => alerting.offer(p));
    const sent: string[] = [];
    const socket = { bufferedAmount: 0, readyState: 1, send: (d: string) => void sent.push(d), close: () => undefined };
    fanout.hub.attach(socket).subscribe([{ panel: "p", metric: "requests", policy: "dashboard", windowMs: 10_000 }]);
    // Frozen: a reader that changed a pane would throw here (modules run in strict mode).
    for (const p of readPaneBody(body).panes) fanout.sink.pane(deepFreeze(p.pane), p.json);
    await vi.waitFor(() => expect(sent.some((f) => f.includes(`"type":"panes"`))).toBe(true));
    for (const fn of pending.splice(0)) fn();
    // The rule read the frozen panes: some services' error ratios are above 1 %.
    expect(alerting.view().active.length).toBeGreaterThan(0);
    fanout.close();
    alerting.close();
    expect(samples.size).toBeGreaterThan(0);
    const stored = fanout.store.select({ policy: "dashboard", windowMs: 10_000 });
    expect(stored.length).toBeGreaterThan(0);
    const want = new Set(decodePaneBody(body));
    for (const s of stored) expect(want.has(s.json)).toBe(true);
  });
});
