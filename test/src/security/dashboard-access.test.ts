/**
 * The dashboard's read access (docs/security.md): no open dashboard off loopback, read tokens
 * compared as digests with several valid at once, the WebSocket token in a first frame or a
 * Sec-WebSocket-Protocol value, `?token=` still accepted but never logged, and the Host
 * allow-list without a token. Real HTTP and WebSocket against the built CLI and in-process servers.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { resolveConfig, startDashboard, type DashboardServer } from "@tidemark/dashboard";
import { spawnTidemark, startTestNats, waitFor, type TestNats } from "../index.js";
import { connectWs } from "../dashboard/fixtures.js";

const TOKENS = ["current-read-token-5f1c", "retiring-read-token-9a2e"];
const quiet = { logLevel: "warn", retryMs: "100ms", port: 0 };

/** A WebSocket's first frame and close code: what a client that never authenticates sees. */
function closeOf(ws: WebSocket): Promise<{ code: number; frames: string[] }> {
  const frames: string[] = [];
  ws.on("message", (d: Buffer) => frames.push(d.toString("utf8")));
  return new Promise((resolve) => ws.once("close", (code) => resolve({ code, frames })));
}

/** GET with an explicit Host header (fetch cannot set one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("dashboard read access", () => {
  let nats: TestNats;
  let guarded: DashboardServer;
  let open: DashboardServer;

  beforeAll(async () => {
    nats = await startTestNats();
    guarded = await startDashboard(resolveConfig({ ...quiet, nats: nats.url, readTokens: TOKENS }));
    open = await startDashboard(resolveConfig({ ...quiet, nats: nats.url }));
  });
  afterAll(async () => {
    await guarded?.close();
    await open?.close();
    await nats?.stop();
  });

  it("refuses to start off loopback without a read token, naming the setting (built CLI)", async () => {
    const cli = spawnTidemark(["dashboard", "--host", "0.0.0.0", "--port", "0", "--nats", nats.url], {
      env: { TIDEMARK_DASHBOARD_TOKEN: "" },
    });
    expect(await cli.exited).not.toBe(0);
    expect(cli.output()).toContain(
      'dashboard setting "readToken" (--token, TIDEMARK_DASHBOARD_TOKEN, dashboard.readToken in the config file) no read token configured but host 0.0.0.0 is not loopback',
    );
  });

  it("accepts each configured read token (rotation) in a header or basic auth, and nothing else", async () => {
    for (const t of TOKENS) {
      expect((await fetch(`${guarded.url}/api/status`, { headers: { authorization: `Bearer ${t}` } })).status).toBe(
        200,
      );
      const basic = Buffer.from(`tidemark:${t}`).toString("base64");
      expect((await fetch(`${guarded.url}/api/status`, { headers: { authorization: `Basic ${basic}` } })).status).toBe(
        200,
      );
    }
    for (const wrong of [`${TOKENS[0]}x`, TOKENS[0]?.slice(0, -1), "", "Bearer"]) {
      const res = await fetch(`${guarded.url}/api/status`, { headers: { authorization: `Bearer ${wrong}` } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "TM_DASHBOARD_UNAUTHORIZED" });
    }
  });

  it("takes the WebSocket token in the first frame or a Sec-WebSocket-Protocol value", async () => {
    const wsUrl = `${guarded.url.replace(/^http/, "ws")}/ws`;
    // First frame (offering the tidemark protocol): hello only after a valid auth frame.
    const first = new WebSocket(wsUrl, ["tidemark"]);
    const firstFrames: string[] = [];
    first.on("message", (d: Buffer) => firstFrames.push(d.toString("utf8")));
    await new Promise((r) => first.once("open", r));
    first.send(JSON.stringify({ type: "auth", token: TOKENS[1] }));
    first.send(JSON.stringify({ type: "ping" }));
    // The server may push status frames (its heartbeat, docs/websocket-protocol.md) between them.
    const types = (): string[] => firstFrames.map((f) => (JSON.parse(f) as { type: string }).type);
    await waitFor(() => types().includes("pong"), 10_000, "a pong after the auth frame");
    expect(types()[0]).toBe("hello");
    expect(types().filter((t) => t !== "status")).toEqual(["hello", "pong"]);
    first.close();
    // Without a token and without the protocol: 401 at the upgrade.
    await expect(connectWs(guarded.url)).rejects.toThrow(/401/);
    // A wrong first frame: an error frame and close 4401, never a hello.
    const wrong = new WebSocket(wsUrl, ["tidemark"]);
    const wrongClosed = closeOf(wrong);
    wrong.once("open", () => wrong.send(JSON.stringify({ type: "auth", token: "not-a-token" })));
    const refused = await wrongClosed;
    expect(refused.code).toBe(4401);
    expect(refused.frames.map((f) => JSON.parse(f) as { type: string; code?: string })).toEqual([
      expect.objectContaining({ type: "error", code: "TM_DASHBOARD_UNAUTHORIZED" }),
    ]);
    // A subscribe before auth is refused the same way.
    const early = new WebSocket(wsUrl, ["tidemark"]);
    const earlyClosed = closeOf(early);
    early.once("open", () => early.send(JSON.stringify({ type: "ping" })));
    expect((await earlyClosed).code).toBe(4401);
    // The token protocol: the server selects `tidemark` and says hello at once.
    const proto = new WebSocket(wsUrl, ["tidemark", `tidemark.token.${TOKENS[0]}`]);
    const hello = new Promise<string>((r) => proto.once("message", (d: Buffer) => r(d.toString("utf8"))));
    await new Promise((r) => proto.once("open", r));
    expect(proto.protocol).toBe("tidemark");
    expect(JSON.parse(await hello)).toMatchObject({ type: "hello" });
    proto.close();
    // A wrong token in the upgrade is refused before the upgrade.
    await expect(connectWs(`${guarded.url}/ws?token=nope-nope`)).rejects.toThrow(/401/);
  });

  it("names the parameter, never internals, in an error (a repeated query parameter)", async () => {
    const res = await fetch(`${open.url}/api/panes?policy=dashboard&window=10s&service=a&service=b`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; error: string };
    expect(body).toEqual({
      code: "TM_DASHBOARD_QUERY_INVALID",
      error: 'query parameter "service" is given 2 times: give it once (a comma list for several services)',
    });
    const policies = await fetch(`${open.url}/api/policies?window=10s&window=60s`);
    expect(policies.status).toBe(400);
    expect(((await policies.json()) as { error: string }).error).toContain('query parameter "window" is given 2 times');
  });

  it("serves without a token only to a loopback Host (DNS rebinding); any Host with one", async () => {
    expect((await getWithHost(`${open.url}/api/status`, "127.0.0.1")).status).toBe(200);
    expect((await getWithHost(`${open.url}/api/status`, `localhost:${new URL(open.url).port}`)).status).toBe(200);
    const rebound = await getWithHost(`${open.url}/api/status`, "attacker.example:3000");
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body)).toMatchObject({ code: "TM_DASHBOARD_HOST_REJECTED" });
    expect((await getWithHost(`${open.url}/`, "attacker.example")).status).toBe(421);
    const metrics = await (await fetch(`${open.url}/metrics`)).text();
    expect(metrics).toMatch(/^tidemark_dashboard_host_rejected_total 2$/m);
    const withToken = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${guarded.url}/api/status`,
        { headers: { host: "dashboard.example", authorization: `Bearer ${TOKENS[0]}` } },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.on("error", reject);
      req.end();
    });
    expect(withToken).toBe(200);
  });

  it("keeps ?token= working (discouraged) and never logs it, nor the NATS password (built CLI, debug logs)", async () => {
    const secret = "query-token-never-logged-7d3";
    const natsPassword = "nats-password-never-logged-1b";
    const natsUrl = nats.url.replace("nats://", `nats://tm:${natsPassword}@`);
    const cli = spawnTidemark(["dashboard", "--port", "0", "--nats", natsUrl], {
      env: { TIDEMARK_DASHBOARD_TOKEN: secret, TIDEMARK_LOG_LEVEL: "debug" },
    });
    try {
      const url = String((await cli.ready).dashboard);
      const ws = await connectWs(`${url}/ws?token=${secret}`);
      await ws.next("hello");
      await ws.close();
      expect((await fetch(`${url}/api/status?token=${secret}`)).status).toBe(200);
      expect((await fetch(`${url}/api/nothing-here?token=${secret}`)).status).toBe(404);
      expect((await fetch(`${url}/api/v1/query?query=up&token=${secret}`)).status).toBeLessThan(500);
      await waitFor(() => cli.output().includes("dashboard client disconnected"), 10_000, "the disconnect log line");
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
    expect(cli.output()).toContain("dashboard listening");
    expect(cli.output()).not.toContain(secret);
    expect(cli.output()).not.toContain(natsPassword);
  });
});
