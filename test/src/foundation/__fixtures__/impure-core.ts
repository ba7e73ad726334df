// Deliberate violations of the pure-core boundary; lint-boundary.test.ts lints this text as if
// it lived in engine/src/core and in sketches/src.
import { readFileSync } from "node:fs";
import { connect } from "@nats-io/transport-node";
import Fastify from "fastify";
import path from "path";

export function impure(): number {
  const now = Date.now();
  const lag = Number(process.env.TIDEMARK_LAG);
  void readFileSync;
  void connect;
  void Fastify;
  void path;
  return now - lag + new Date().getTime();
}
