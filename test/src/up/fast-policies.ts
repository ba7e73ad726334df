/**
 * A tidemark.config.json for tests: the three default policies by name, with lags and graces
 * short enough that billing's final panes arrive within seconds instead of 100 s. Shapes
 * (strategies, triggers, modes) are the defaults'; only the durations shrink.
 */
export const FAST_POLICIES_CONFIG = {
  windows: ["10s"],
  referenceHorizon: "15s",
  policies: [
    {
      name: "dashboard",
      label: "dashboard: 1 s, biased",
      watermark: { kind: "arrival-lag", lag: "1s" },
      grace: 0,
      earlyEvery: "1s",
      mode: "accumulating",
    },
    {
      name: "alerting",
      label: "alerting: 2 s, final 6 s",
      watermark: { kind: "arrival-lag", lag: "2s" },
      grace: "4s",
      earlyEvery: "2s",
      lateEvery: "1s",
      mode: "retracting",
    },
    {
      name: "billing",
      label: "billing: exact, 8 s",
      watermark: { kind: "arrival-lag", lag: "2s" },
      grace: "6s",
      mode: "final-only",
    },
  ],
  // Sessions are left unset so `up` turns them on (its default); a short gap closes them fast.
  engine: { checkpointEvery: "1s", idleTimeout: "2s", sessions: { gap: "2s" } },
  demo: { rate: 300, corr: 0.3 },
};
