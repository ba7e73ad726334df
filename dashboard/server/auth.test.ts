import { describe, expect, it } from "vitest";
import type { FastifyRequest } from "fastify";
import { hostAllowed, isReadToken, tokenOf } from "./auth.js";
import { resolveConfig } from "./config.js";

const req = (headers: Record<string, string>, query: Record<string, string> = {}) =>
  ({ headers, query }) as unknown as FastifyRequest;

describe("dashboard read access", () => {
  it("accepts every configured read token and nothing else", () => {
    const c = resolveConfig({ readTokens: ["first-token", "second-token"] });
    expect(isReadToken(c, "first-token")).toBe(true);
    expect(isReadToken(c, "second-token")).toBe(true);
    for (const t of ["first-toke", "first-tokenx", "", undefined]) expect(isReadToken(c, t)).toBe(false);
  });

  it("finds the token in a bearer header, basic auth, a token subprotocol, or ?token=", () => {
    expect(tokenOf(req({ authorization: "Bearer abc" }))).toBe("abc");
    expect(tokenOf(req({ authorization: `Basic ${Buffer.from("tidemark:p:w").toString("base64")}` }))).toBe("p:w");
    expect(tokenOf(req({ "sec-websocket-protocol": "tidemark, tidemark.token.xyz" }))).toBe("xyz");
    expect(tokenOf(req({}, { token: "q" }))).toBe("q");
    expect(tokenOf(req({ "sec-websocket-protocol": "tidemark" }))).toBeUndefined();
  });

  it("serves only this machine's names without a read token, any name with one", () => {
    const open = resolveConfig({ allowedHosts: ["dash.internal", "proxy.example:8443"] });
    for (const h of [
      "localhost",
      "localhost:3000",
      "127.0.0.1:3000",
      "127.1.2.3",
      "[::1]:3000",
      "dash.internal:3000",
      "proxy.example:8443",
    ])
      expect(hostAllowed(open, h), h).toBe(true);
    for (const h of [
      "attacker.example",
      "attacker.example:3000",
      "proxy.example:9999",
      "localhost.attacker.example",
      "127.0.0.1.attacker.example",
      undefined,
    ])
      expect(hostAllowed(open, h), String(h)).toBe(false);
    expect(hostAllowed(resolveConfig({ readToken: "some-token" }), "attacker.example")).toBe(true);
  });
});
