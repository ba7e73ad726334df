/**
 * The backpressure metrics of an operator's /metrics (docs/operations.md, "Metrics";
 * docs/decisions/0035-backpressure.md): per output stream what is in flight and waiting, the bound,
 * the resends, and the time the input was held. Read at scrape time from the operator
 * (backpressure-status.ts's BackpressureSource); `prefix` is tidemark_engine_ or tidemark_merge_.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { BackpressureSource } from "./backpressure-status.js";
import type { PublishStats } from "../output/pane-sink.js";

type Read = (s: PublishStats) => number;

const GAUGES: Array<[string, string, Read]> = [
  ["publish_in_flight_messages", "Publishes sent to the stream and not yet acknowledged.", (s) => s.inFlight.messages],
  [
    "publish_in_flight_bytes",
    "Bytes held by the bodies of publishes sent and not yet acknowledged.",
    (s) => s.inFlight.bytes,
  ],
  [
    "publish_waiting_messages",
    "Publishes made and not yet sent: past the window (TM_PANES), or behind the one in flight (TM_PARTIALS, one at a time).",
    (s) => s.waiting.messages,
  ],
  ["publish_waiting_bytes", "Bytes held by the bodies of publishes made and not yet sent.", (s) => s.waiting.bytes],
  [
    "publish_in_flight_limit_messages",
    "The bound in messages at which the input is held (TM_PANES: in flight; TM_PARTIALS: in flight and waiting).",
    (s) => s.limits.messages,
  ],
  [
    "publish_in_flight_limit_bytes",
    "The bound in bytes at which the input is held (TM_PANES: in flight; TM_PARTIALS: in flight and waiting).",
    (s) => s.limits.bytes,
  ],
];

export function registerBackpressureMetrics(registry: Registry, prefix: string, op: BackpressureSource): void {
  const registers = [registry];
  for (const [name, help, read] of GAUGES)
    new Gauge({
      name: `${prefix}${name}`,
      help,
      labelNames: ["stream"],
      registers,
      collect() {
        this.reset();
        for (const { stream, stats } of op.publishStats()) this.set({ stream }, read(stats));
      },
    });
  new Counter({
    name: `${prefix}publish_resends_total`,
    help: "Publishes sent again after their ack timeout (doubling per attempt, with jitter) or a refusal.",
    labelNames: ["stream"],
    registers,
    collect() {
      this.reset();
      for (const { stream, stats } of op.publishStats()) this.inc({ stream }, stats.resends);
    },
  });
  new Counter({
    name: `${prefix}input_held_seconds_total`,
    help: "Wall time the input was held because an output's acknowledgements lagged (backpressure).",
    registers,
    collect() {
      this.reset();
      this.inc(op.gate.hold.totalMs() / 1000);
    },
  });
}
