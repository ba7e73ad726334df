/**
 * Prometheus metrics of the engine role (docs/operations.md,
 * "Metrics (`/metrics`, label `worker`)"), read from the live engine on each scrape so the hot path
 * only bumps plain numbers. Served on a small HTTP server at /metrics.
 */
import { createServer, type Server } from "node:http";
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
} from "prom-client";
import type { CoreStatus, PolicyStatus } from "../../core/types.js";
import { LAG_BUCKETS_S, type PipelineLag } from "./pipeline-lag.js";
import { registerSessionGauges } from "./session-gauges.js";

/** Bucket bounds of tidemark_engine_checkpoint_pause_seconds, seconds. */
export const CHECKPOINT_PAUSE_BUCKETS_S: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** What the metrics read from the engine at scrape time. */
export interface EngineMetricsView {
  eventsTotal(): number;
  /** Panes emitted per policy and kind. */
  panesEmitted(): ReadonlyMap<string, ReadonlyMap<string, number>>;
  status(): CoreStatus;
  /** Owned partition ids, in lane order. */
  partitions(): readonly number[];
  /** Pipeline lag observed per event (pipeline-lag.ts). */
  pipelineLag(): PipelineLag;
  /** Stage-1 partial batches published (workers only). */
  partialsTotal?(): number;
}

export class EngineMetrics {
  readonly registry = new Registry();
  private readonly checkpointDuration: Histogram;
  private readonly checkpointPause: Histogram;
  private readonly checkpointBytes: Gauge;
  readonly checkpointsCorrupt: Counter;

  /** `prefix`: tidemark_engine_ for the workers, tidemark_merge_ for the merge stage (docs/operations.md, "Metrics"). */
  constructor(view: EngineMetricsView, labels: Record<string, string>, prefix = "tidemark_engine_") {
    const r = this.registry;
    r.setDefaultLabels(labels);
    collectDefaultMetrics({ register: r, prefix });
    // The nodejs_active_*_total sums are gauges named like counters (promtool check metrics warns, docs/operations.md,
    // "Metrics"): dropped; the per-type nodejs_active_* gauges they sum stay.
    for (const what of ["handles", "requests", "resources"])
      r.removeSingleMetric(`${prefix}nodejs_active_${what}_total`);
    const registers = [r];
    new Counter({
      name: `${prefix}events_total`,
      help: "Events fed to the core (merged from the owned partitions).",
      registers,
      collect() {
        this.reset();
        this.inc(view.eventsTotal());
      },
    });
    const partials = view.partialsTotal?.bind(view);
    if (partials)
      new Counter({
        name: `${prefix}partial_batches_total`,
        help: "Stage-1 partial batches published to TM_PARTIALS for the merge stage.",
        registers,
        collect() {
          this.reset();
          this.inc(partials());
        },
      });
    perPolicy(
      r,
      () => view.status(),
      `${prefix}dropped_window_events_total`,
      "(event, window) pairs dropped for a policy (behind watermark + grace); each is one record on TM_LATE.",
      (p) => p.droppedWindowEvents,
    );
    perPolicy(
      r,
      () => view.status(),
      `${prefix}dropped_events_total`,
      "Events dropped for a policy from at least one of their windows.",
      (p) => p.droppedEvents,
    );
    perPolicy(
      r,
      () => view.status(),
      `${prefix}late_accepted_window_events_total`,
      "(event, window) pairs a policy accepted late (behind its watermark, within grace).",
      (p) => p.lateAcceptedWindowEvents,
    );
    perPolicy(
      r,
      () => view.status(),
      `${prefix}late_accepted_events_total`,
      "Events a policy accepted late into at least one of their windows.",
      (p) => p.lateAcceptedEvents,
    );
    new Counter({
      name: `${prefix}panes_emitted_total`,
      help: "Panes emitted, by policy and kind.",
      labelNames: ["policy", "kind"],
      registers,
      collect() {
        this.reset();
        for (const [policy, kinds] of view.panesEmitted()) for (const [kind, n] of kinds) this.inc({ policy, kind }, n);
      },
    });
    new Gauge({
      name: `${prefix}watermark_lag_seconds`,
      help: "Log time minus the policy's watermark.",
      labelNames: ["policy"],
      registers,
      collect() {
        this.reset();
        const s = view.status();
        for (const p of s.policies)
          if (p.watermark !== null && s.logTime !== null)
            this.set({ policy: p.name }, (s.logTime - p.watermark) / 1000);
      },
    });
    new Gauge({
      name: `${prefix}partition_idle`,
      help: "1 when the owned partition is idle (no event for the idle timeout of log time), else 0.",
      labelNames: ["partition"],
      registers,
      collect() {
        this.reset();
        const ids = view.partitions();
        for (const p of view.status().partitions)
          this.set({ partition: String(ids[p.partition] ?? p.partition) }, p.idle ? 1 : 0);
      },
    });
    new Counter({
      name: `${prefix}key_overflow_events_total`,
      help: "Events folded into service or route (other) by serviceCap / routeCapPerService; counted, never refused.",
      labelNames: ["key"],
      registers,
      collect() {
        this.reset();
        const o = view.status().overflow;
        this.inc({ key: "service" }, o.services);
        this.inc({ key: "route" }, o.routes);
      },
    });
    gauge(r, `${prefix}state_keys`, "Open (window, key) states.", () => view.status().stateKeys);
    gauge(r, `${prefix}state_bytes`, "Estimated heap bytes of window state.", () => view.status().stateBytes);
    if (prefix === "tidemark_engine_") registerSessionGauges(r, prefix, () => view.status());
    r.registerMetric(
      new LagHistogram(view.pipelineLag, {
        name: `${prefix}pipeline_lag_seconds`,
        help: "Wall clock minus log time as the core handles each event: how long after ingest stamped it.",
        buckets: LAG_BUCKETS_S,
      }),
    );
    this.checkpointDuration = new Histogram({
      name: `${prefix}checkpoint_duration_seconds`,
      help: "Time to write one checkpoint (snapshot, wait for pane acks, write, fsync, rename).",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    // The pause alone (docs/decisions/0016-checkpoints-without-pause.md): the duration above includes ack waits.
    this.checkpointPause = new Histogram({
      name: `${prefix}checkpoint_pause_seconds`,
      help: "Time the input was held for one checkpoint: from the cut until the snapshot is encoded (in slices, the event loop serving between them).",
      buckets: [...CHECKPOINT_PAUSE_BUCKETS_S],
      registers,
    });
    this.checkpointBytes = new Gauge({
      name: `${prefix}checkpoint_bytes`,
      help: "Size of the last checkpoint.",
      registers,
    });
    this.checkpointsCorrupt = new Counter({
      name: `${prefix}checkpoints_corrupt_total`,
      help: "Checkpoint files skipped at start because they failed to decode or verify.",
      registers,
    });
  }

  checkpointWritten(seconds: number, bytes: number, pauseSeconds: number): void {
    this.checkpointDuration.observe(seconds);
    this.checkpointPause.observe(pauseSeconds);
    this.checkpointBytes.set(bytes);
  }

  /** Serves GET /metrics (and /healthz) on host:port; resolves with the bound port. */
  async serve(host: string, port: number): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (req.url === "/metrics") {
        this.registry.metrics().then(
          (text) => res.writeHead(200, { "content-type": this.registry.contentType }).end(text),
          (err: Error) => res.writeHead(500).end(err.message),
        );
      } else if (req.url === "/healthz") res.writeHead(200).end("ok\n");
      else res.writeHead(404).end("not found: try /metrics\n");
    });
    // prom-client's default GC metric observes for the life of the process and holds this registry,
    // whose collect callbacks hold the core: once the role stops serving, the registry lets go of
    // them, so a role stopped in a process that goes on (tests, benchmarks, an embedding program;
    // `tidemark up` runs each role in a process of its own) is collected.
    server.once("close", () => this.registry.clear());
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address();
    return { server, port: typeof addr === "object" && addr ? addr.port : port };
  }
}

/** A counter per policy, read from the core's status at scrape time. */
function perPolicy(
  r: Registry,
  status: () => CoreStatus,
  name: string,
  help: string,
  read: (p: PolicyStatus) => number,
): void {
  new Counter({
    name,
    help,
    labelNames: ["policy"],
    registers: [r],
    collect() {
      this.reset();
      for (const p of status().policies) this.inc({ policy: p.name }, read(p));
    },
  });
}

function gauge(r: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [r],
    collect() {
      this.set(read());
    },
  });
}

/**
 * A histogram whose counts are kept by PipelineLag, weighted by events: observing each event through
 * prom-client would cost a call per event in the hot path. Exported as any histogram is.
 */
class LagHistogram extends Histogram {
  private readonly metricName: string;
  private readonly metricHelp: string;

  constructor(
    private readonly lag: () => PipelineLag,
    config: { name: string; help: string; buckets: number[] },
  ) {
    super({ ...config, registers: [] });
    this.metricName = config.name;
    this.metricHelp = config.help;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    return this.getForPromString();
  }

  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const l = this.lag();
    const name = this.metricName;
    const bucket = `${name}_bucket`;
    let acc = 0;
    const values: Array<MetricValueWithName<string>> = LAG_BUCKETS_S.map((le, i) => {
      acc += l.counts[i] as number;
      return { labels: { le }, value: acc, metricName: bucket };
    });
    values.push(
      { labels: { le: "+Inf" }, value: l.count, metricName: bucket },
      { labels: {}, value: l.sumSeconds, metricName: `${name}_sum` },
      { labels: {}, value: l.count, metricName: `${name}_count` },
    );
    // The runtime's type is the string; prom-client's typings declare a numeric enum.
    const type = "histogram" as unknown as MetricType;
    return { name, help: this.metricHelp, type, values, aggregator: "sum", collect: () => undefined };
  }
}
