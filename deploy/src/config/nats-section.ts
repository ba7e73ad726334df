/**
 * The `nats` section: where the roles find NATS and how they authenticate (docs/operations.md,
 * "Running past one machine").
 */
import { invalid, type Fields, type Json } from "./fields.js";

export interface NatsSettings {
  /** Servers (comma list). Undefined: `tidemark up` starts its own nats-server. */
  readonly url: string | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly token: string | undefined;
  /** JetStream replicas for the tidemark streams: 1 on one machine, 3 on a 3-node cluster. */
  readonly replicas: 1 | 3 | 5;
  /** Ports of the nats-server `tidemark up` starts (preferred; a free one when taken). */
  readonly port: number;
  readonly monitorPort: number;
}

export const NATS_KEYS = ["url", "user", "password", "token", "replicas", "port", "monitorPort"] as const;
const URL_LIST = /^(nats|tls):\/\/[^\s,]+(,(nats|tls):\/\/[^\s,]+)*$/;

export function readNats(f: Fields, raw: unknown): NatsSettings {
  const s: Json = raw === undefined ? {} : f.object(raw, "$.nats", NATS_KEYS);
  const str = (key: string): string | undefined => f.optional(s[key], (v) => f.string(v, `$.nats.${key}`), undefined);
  const url = f.optional(
    s.url,
    (v) =>
      f.string(
        v,
        "$.nats.url",
        URL_LIST,
        'a NATS URL or comma list such as "nats://10.0.0.1:4222,nats://10.0.0.2:4222"',
      ),
    undefined,
  );
  const replicas = f.optional(s.replicas, (v) => f.int(v, "$.nats.replicas", 1, 5), 1);
  if (replicas !== 1 && replicas !== 3 && replicas !== 5)
    throw invalid(f.source, "$.nats.replicas", "1, 3 or 5 (JetStream needs an odd quorum)", replicas);
  const user = str("user");
  const password = str("password");
  if (user !== undefined && password === undefined)
    throw invalid(f.source, "$.nats.password", "set when $.nats.user is", undefined);
  if (password !== undefined && user === undefined)
    throw invalid(f.source, "$.nats.user", "set when $.nats.password is", undefined);
  return Object.freeze({
    url,
    user,
    password,
    token: str("token"),
    replicas,
    port: f.optional(s.port, (v) => f.int(v, "$.nats.port", 1, 65535), 4222),
    monitorPort: f.optional(s.monitorPort, (v) => f.int(v, "$.nats.monitorPort", 1, 65535), 8222),
  });
}
