import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envConfig, readConfigFile, resolveConfig } from "../config.js";
import { parseAlerts, scopeOf } from "./alerts-config.js";

const SCOPE = scopeOf({}, "config");
const RULE = { alert: "HighErrorRate", expr: 'tidemark_error_ratio{policy="alerting",window="10s"} > 0.05' };

/** The coded error a section gives, as "[code] message". */
function failure(section: unknown): string {
  try {
    parseAlerts(section, SCOPE, "tidemark.config.json");
  } catch (err) {
    const e = err as { code?: string; message: string };
    return `[${e.code}] ${e.message}`;
  }
  throw new Error("the section was accepted");
}
const withRules = (...rules: unknown[]) => ({ alertmanagers: ["http://127.0.0.1:9093"], rules });

describe("alerts section: validated once, each error names the rule and the field", () => {
  it("accepts the Prometheus rule shape and reads the threshold, policy, window and for", () => {
    const a = parseAlerts(
      withRules({ ...RULE, for: "30s", labels: { severity: "page" }, annotations: { summary: "{{ $value }}" } }),
      SCOPE,
      "f",
    );
    expect(a.alertmanagers).toEqual(["http://127.0.0.1:9093"]);
    expect(a.resendMs).toBe(30_000);
    expect(a.resolvedResendMs).toBe(900_000);
    const r = a.rules[0];
    expect(r).toMatchObject({ index: 0, alert: "HighErrorRate", forMs: 30_000, labels: { severity: "page" } });
    expect(r?.shape).toMatchObject({
      op: ">",
      threshold: 0.05,
      policy: "alerting",
      windowMs: 10_000,
      metric: "tidemark_error_ratio",
      biasField: "errorRatePp",
      plain: true,
    });
  });

  it("turns a threshold on the left around: 0.05 < x is x > 0.05", () => {
    const a = parseAlerts(
      withRules({ alert: "A", expr: '0.05 < tidemark_error_ratio{policy="alerting",window="10s"}' }),
      SCOPE,
      "f",
    );
    expect(a.rules[0]?.shape).toMatchObject({ op: ">", threshold: 0.05 });
  });

  it.each([
    [
      "a bad expression",
      { alert: "Broken", expr: 'tidemark_error_ratio{policy="alerting" > 0.05' },
      /^\[TM_CONFIG_INVALID\] tidemark\.config\.json: \$\.alerts\.rules\[1\] \("Broken"\)\.expr parse error/,
    ],
    [
      "an unknown policy",
      { alert: "Typo", expr: 'tidemark_error_ratio{policy="alertng",window="10s"} > 0.05' },
      /\$\.alerts\.rules\[1\] \("Typo"\)\.expr unknown policy "alertng": the config's policies are dashboard, alerting, billing/,
    ],
    [
      "an unknown window",
      { alert: "W", expr: 'tidemark_error_ratio{policy="alerting",window="15s"} > 0.05' },
      /\$\.alerts\.rules\[1\] \("W"\)\.expr unknown window "15s": the config's windows are 10s, 60s/,
    ],
    [
      "a window spelled other than its label",
      { alert: "W", expr: 'tidemark_error_ratio{policy="alerting",window="1m"} > 0.05' },
      /\("W"\)\.expr unknown window "1m": write window="60s" \(the label is in seconds\)/,
    ],
    [
      "a selector without its policy",
      { alert: "P", expr: 'tidemark_error_ratio{window="10s"} > 0.05' },
      /\("P"\)\.expr every selector must name its policy with =/,
    ],
    [
      "two policies",
      {
        alert: "P2",
        expr: 'tidemark_errors{policy="alerting",window="10s"} / tidemark_requests{policy="billing",window="10s"} > 0.05',
      },
      /\("P2"\)\.expr every selector must name the same policy: "alerting" and "billing"/,
    ],
    [
      "no threshold",
      { alert: "N", expr: 'tidemark_error_ratio{policy="alerting",window="10s"}' },
      /\("N"\)\.expr must compare an instant vector with a number/,
    ],
    [
      "bool",
      { alert: "B", expr: 'tidemark_error_ratio{policy="alerting",window="10s"} > bool 0.05' },
      /\("B"\)\.expr may not use bool/,
    ],
    [
      "an unknown metric",
      { alert: "M", expr: 'tidemark_eror_ratio{policy="alerting",window="10s"} > 0.05' },
      /\("M"\)\.expr unknown metric tidemark_eror_ratio/,
    ],
    ["a bad for", { ...RULE, for: "soon" }, /\$\.alerts\.rules\[1\] \("HighErrorRate"\)\.for must be a duration/],
    [
      "a label tidemark sets",
      { ...RULE, labels: { service: "x" } },
      /\("HighErrorRate"\)\.labels\.service is set by tidemark/,
    ],
    [
      "an annotation tidemark sets",
      { ...RULE, annotations: { bias: "x" } },
      /\("HighErrorRate"\)\.annotations\.bias is set by tidemark/,
    ],
    [
      "an unknown key",
      { ...RULE, keep_firing_for: "1m" },
      /\$\.alerts\.rules\[1\]\.keep_firing_for is not a known key/,
    ],
    ["no alert name", { expr: RULE.expr }, /\$\.alerts\.rules\[1\]\.alert must be a non-empty string/],
  ])("refuses %s", (_what, bad, message) => {
    expect(failure(withRules(RULE, bad))).toMatch(message);
    expect(failure(withRules(RULE, bad))).toMatch(/^\[TM_CONFIG_INVALID\] tidemark\.config\.json: /);
  });

  it("refuses a bad Alertmanager URL and unknown section keys", () => {
    expect(failure({ alertmanagers: ["127.0.0.1:9093"] })).toMatch(
      /\$\.alerts\.alertmanagers\[0\] must be an http\(s\) URL/,
    );
    expect(failure({ alertmanager: [] })).toMatch(/\$\.alerts\.alertmanager is not a known key/);
  });
});

describe("alerts in the dashboard config", () => {
  function file(doc: unknown): string {
    const dir = mkdtempSync(join(tmpdir(), "tidemark-alerts-config-"));
    const path = join(dir, "tidemark.config.json");
    writeFileSync(path, JSON.stringify(doc));
    return path;
  }

  it("reads the top-level alerts of the file against the file's own policies and windows", () => {
    const policies = [
      { name: "pager", watermark: { kind: "arrival-lag", lag: "5s" }, grace: "0s", mode: "accumulating" },
    ];
    const good = file({
      policies,
      windows: ["30s"],
      alerts: { rules: [{ alert: "A", expr: 'tidemark_requests{policy="pager",window="30s"} < 1' }] },
    });
    expect(resolveConfig(readConfigFile(good)).alerts.rules[0]?.shape).toMatchObject({
      policy: "pager",
      windowMs: 30_000,
    });
    const bad = file({ policies, alerts: { rules: [RULE] } });
    expect(() => readConfigFile(bad)).toThrow(
      /\$\.alerts\.rules\[0\] \("HighErrorRate"\)\.expr unknown policy "alerting": the config's policies are pager/,
    );
  });

  it("takes Alertmanagers from TIDEMARK_ALERTMANAGERS over the file, and refuses alerts inside the dashboard section", () => {
    const path = file({ alerts: { alertmanagers: ["http://a:9093"], rules: [RULE] } });
    const c = resolveConfig(
      readConfigFile(path),
      envConfig({ TIDEMARK_ALERTMANAGERS: "http://b:9093/, http://c:9093" }),
    );
    expect(c.alerts.alertmanagers).toEqual(["http://b:9093", "http://c:9093"]);
    expect(c.alerts.rules).toHaveLength(1);
    expect(() => resolveConfig(envConfig({ TIDEMARK_ALERTMANAGERS: "b:9093" }))).toThrow(
      /TIDEMARK_ALERTMANAGERS.*alertmanagers\[0\] must be an http\(s\) URL/,
    );
    expect(() => readConfigFile(file({ dashboard: { alerts: {} } }))).toThrow(/top-level alerts section/);
  });
});
