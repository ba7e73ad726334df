/**
 * Alerts to every Alertmanager (docs/operations.md, "Alerts"): a firing alert goes out when it
 * fires and every `resendMs` after, with endsAt 4 × resendMs ahead (so an Alertmanager that stops
 * hearing from tidemark resolves it by itself); an ended one goes out with endsAt = when it ended
 * and again for `resolvedResendMs`. Nothing is sent before `start()`: the replay of TM_PANES rebuilds
 * the alerts' state first (docs/decisions/0014-alerts.md, "Restart").
 */
import type { AlertEventKind } from "../../protocol/alerts.js";
import type { AlertListener, AlertNotice } from "../rules/index.js";
import type { AlertmanagerTarget, PostableAlert } from "./alertmanager-target.js";

interface Ended {
  readonly notice: AlertNotice;
  /** Log time it ended. */
  readonly endsAt: number;
  /** Wall clock until which its resolution is sent again. */
  readonly until: number;
}

export interface DeliveryTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export class AlertDelivery implements AlertListener {
  private readonly firing = new Map<string, AlertNotice>();
  private readonly resolutions = new Map<string, Ended>();
  private live = false;
  private interval: unknown;

  constructor(
    private readonly targets: readonly AlertmanagerTarget[],
    private readonly opts: { readonly resendMs: number; readonly resolvedResendMs: number },
    private readonly now: () => number,
    private readonly timers: DeliveryTimers,
  ) {}

  fired(n: AlertNotice): void {
    this.resolutions.delete(n.fingerprint);
    this.firing.set(n.fingerprint, n);
    if (this.live) this.push([[n.fingerprint, this.firingBody(n)]]);
  }

  updated(n: AlertNotice): void {
    if (this.firing.has(n.fingerprint)) this.firing.set(n.fingerprint, n);
  }

  ended(n: AlertNotice, _how: Exclude<AlertEventKind, "fired">, endsAt: number): void {
    this.firing.delete(n.fingerprint);
    const e: Ended = { notice: n, endsAt, until: (this.live ? this.now() : endsAt) + this.opts.resolvedResendMs };
    this.resolutions.set(n.fingerprint, e);
    if (this.live) this.push([[n.fingerprint, this.endedBody(e)]]);
  }

  /** The replay is over: send what is firing and what ended lately, then keep resending. */
  start(): void {
    if (this.live) return;
    this.live = true;
    this.resend();
    this.interval = this.timers.setInterval(() => this.resend(), this.opts.resendMs);
  }

  close(): void {
    if (this.interval !== undefined) this.timers.clearInterval(this.interval);
    for (const t of this.targets) t.close();
  }

  /** Every firing alert, and every resolution still within its resend period. */
  resend(): void {
    const now = this.now();
    const out: Array<readonly [string, PostableAlert]> = [];
    for (const [fp, e] of this.resolutions) {
      if (e.until < now) this.resolutions.delete(fp);
      else out.push([fp, this.endedBody(e)]);
    }
    for (const [fp, n] of this.firing) out.push([fp, this.firingBody(n)]);
    if (out.length > 0) this.push(out);
  }

  private push(alerts: ReadonlyArray<readonly [string, PostableAlert]>): void {
    for (const t of this.targets) t.offer(alerts);
  }

  private firingBody(n: AlertNotice): PostableAlert {
    const now = this.now();
    return body(n, Math.min(n.startsAt, now), now + 4 * this.opts.resendMs);
  }

  /** endsAt is when it ended (log time), never after now (else it would not read as resolved) nor before startsAt. */
  private endedBody(e: Ended): PostableAlert {
    const now = this.now();
    const startsAt = Math.min(e.notice.startsAt, now);
    return body(e.notice, startsAt, Math.max(startsAt, Math.min(e.endsAt, now)));
  }
}

function body(n: AlertNotice, startsAt: number, endsAt: number): PostableAlert {
  return {
    labels: n.labels,
    annotations: n.annotations,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(endsAt).toISOString(),
    generatorURL: n.generatorURL,
  };
}
