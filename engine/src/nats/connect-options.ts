/**
 * How every role reaches NATS (docs/operations.md, "Running past one machine"): the URL may be
 * a comma list of servers (any one is enough to join a cluster; the client learns the others),
 * and credentials come from TIDEMARK_NATS_USER + TIDEMARK_NATS_PASSWORD or TIDEMARK_NATS_TOKEN
 * (deploy/nats/*.conf enable auth). `tidemark up` sets these from tidemark.config.json `nats`.
 */
export interface NatsConnectOptions {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
}

/** A NATS URL (or comma list of URLs) with any user, password or token removed, for logs. */
export function redactUrl(urls: string): string {
  return urls.replace(/(\w+:\/\/)[^@/\s,]*@/g, "$1***@");
}

export function natsConnectOptions(
  url: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): NatsConnectOptions {
  const servers = url
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const user = env.TIDEMARK_NATS_USER;
  const token = env.TIDEMARK_NATS_TOKEN;
  if (user) return { servers, user, pass: env.TIDEMARK_NATS_PASSWORD ?? "" };
  if (token) return { servers, token };
  return { servers };
}
