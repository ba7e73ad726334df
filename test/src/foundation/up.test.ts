import { existsSync, readFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { isAlive, spawnTidemark, stopLeftovers, waitFor, type CliProcess } from "../index.js";

function hold(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(undefined));
    srv.listen(port, "127.0.0.1", () => resolve(srv));
  });
}

/**
 * Holds `port` for this test itself. Another process holding it can let it go at any moment (test/src/up/up.test.ts
 * runs `up` on 4222 beside this file), and `up` would then take it: so wait, bounded, until it is ours.
 */
async function holdOwn(port: number, timeoutMs = 120_000): Promise<Server> {
  let srv: Server | undefined;
  await waitFor(async () => (srv = await hold(port)) !== undefined, timeoutMs, `port ${port} held by this test`);
  return srv as Server;
}

describe("tidemark up", () => {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-up-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts nats-server with JetStream under <data>/nats, on a free port when 4222 is taken, and stops cleanly on SIGINT", async () => {
    const blocker = await holdOwn(4222); // 4222 is now taken, by us
    let up: CliProcess | undefined;
    try {
      up = spawnTidemark(["up", "--no-demo", "--data", join(dir, "data")], { cwd: dir });
      const ready = await up.ready;
      const natsUrl = String(ready.nats);
      expect(natsUrl).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
      expect(natsUrl.endsWith(":4222")).toBe(false);
      const pids = ready.pids as Record<string, number>;
      const natsPid = pids["nats-server"] ?? -1;
      expect(isAlive(natsPid)).toBe(true);

      // The nats-server `up` starts takes its generated token only (docs/security.md, "NATS under `up`").
      const natsToken = String(ready.natsToken);
      expect(readFileSync(join(dir, "data", "nats-token"), "utf8").trim()).toBe(natsToken);
      await expect(connect({ servers: natsUrl, noAsyncTraces: true })).rejects.toThrow(/Authorization/i);
      const nc = await connect({ servers: natsUrl, token: natsToken, noAsyncTraces: true });
      // JetStream answers, and stores a stream under <data>/nats.
      const jsm = await jetstreamManager(nc);
      const calls = (await jsm.getAccountInfo()).api.total;
      await jsm.streams.add({ name: "UP_TEST", subjects: ["up.test"] });
      const ack = await jetstream(nc).publish("up.test", "hello");
      expect([ack.stream, ack.seq]).toEqual(["UP_TEST", 1]);
      const info = await jsm.getAccountInfo();
      expect(info.api.total).toBeGreaterThan(calls);
      expect(info.streams).toBeGreaterThanOrEqual(1);
      const stored = readdirSync(join(dir, "data", "nats"), { recursive: true }).map(String);
      expect(
        stored.some((p) => p.split("/").includes("UP_TEST")),
        stored.join(", "),
      ).toBe(true);
      await nc.close();

      up.child.kill("SIGINT");
      expect(await up.exited).toBe(0);
      await waitFor(() => !isAlive(natsPid), 10_000, "nats-server to exit");
      expect(existsSync(join(dir, "data", "nats"))).toBe(true);
      expect(readdirSync(join(dir, "data", "nats")).length).toBeGreaterThan(0);
      expect(up.output()).toContain("stopped; data left in place");
    } finally {
      blocker.close();
      // A failed assertion must not leave `up` and its nats-server running (on 4222, for the next file).
      if (up) await stopLeftovers([up]);
    }
  }, 180_000); // the wait for 4222 (holdOwn, at most 120 s) and the run itself
});
