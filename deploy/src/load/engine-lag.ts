/**
 * Listens to the engine's `tm.status` (core NATS, once a second per worker; EngineStatusMessage
 * in @tidemark/engine/protocol) and feeds each worker's pipeline lag to a LagTracker, for the
 * progress line and the summary of `tidemark load`.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "@tidemark/engine/nats";
import { SUBJECT_STATUS, type EngineStatusMessage } from "@tidemark/engine/protocol";
import { LagTracker } from "./lag-tracker.js";

export interface NatsCredentials {
  user?: string | undefined;
  pass?: string | undefined;
  token?: string | undefined;
}

export class EngineLag {
  readonly tracker = new LagTracker();
  private waiters: Array<() => void> = [];

  private constructor(private readonly nc: NatsConnection) {
    nc.subscribe(SUBJECT_STATUS, {
      callback: (err, msg) => {
        if (err) return;
        try {
          this.tracker.observe(JSON.parse(msg.string()) as EngineStatusMessage);
        } catch {
          return; // not a status message: ignored
        }
        for (const w of this.waiters.splice(0)) w();
      },
    });
  }

  /** Connects (TM_NATS_UNREACHABLE when it cannot) and subscribes. */
  static async connect(url: string, credentials: NatsCredentials = {}): Promise<EngineLag> {
    const extra = Object.fromEntries(Object.entries(credentials).filter(([, v]) => v !== undefined));
    return new EngineLag(await connectNats(url, extra));
  }

  /** Resolves once `n` more status messages came, or after `timeoutMs`: the figures at the run's end. */
  async fresh(n: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (let i = 0; i < n && Date.now() < deadline; i++) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(resolve);
      });
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
