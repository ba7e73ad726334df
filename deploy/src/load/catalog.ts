/**
 * The services and routes `tidemark load` sends traffic for (docs/operations.md, "`tidemark
 * load`"): `services` services named like real ones (the demo's six first, then common backend
 * names, then `svc-25`, `svc-26`, …), each with `routes` REST routes, Zipf-like popularity with a
 * floor so every service and route gets traffic, and a lognormal latency and a ~1 % error rate
 * per route drawn from the seed. Pure.
 */
import { DEMO_CATALOG, type RouteSpec, type ServiceSpec } from "../demo/catalog.js";
import { Prng } from "../demo/prng.js";

const MORE_SERVICES = [
  "payments",
  "orders",
  "cart",
  "users",
  "notifications",
  "shipping",
  "pricing",
  "catalog",
  "reviews",
  "media",
  "billing",
  "accounts",
  "sessions",
  "analytics",
  "ads",
  "email",
  "geo",
  "ratings",
];
const SERVICE_NAMES = [...DEMO_CATALOG.map((s) => s.service), ...MORE_SERVICES];

/** Route shapes of a resource `r`; past these, `GET /api/v1/r/rN`. */
const ROUTE_TEMPLATES = [
  (r: string) => `GET /api/v1/${r}`,
  (r: string) => `GET /api/v1/${r}/:id`,
  (r: string) => `POST /api/v1/${r}`,
  (r: string) => `PUT /api/v1/${r}/:id`,
  (r: string) => `DELETE /api/v1/${r}/:id`,
  (r: string) => `GET /api/v1/${r}/search`,
  (r: string) => `PATCH /api/v1/${r}/:id`,
  (r: string) => `GET /api/v1/${r}/:id/history`,
];

/** Share of the traffic spread evenly, so the least popular of many services still gets some. */
const EVEN_SHARE = 0.2;
/** Zipf exponent of service and route popularity. */
const ZIPF_S = 1;

export function serviceName(i: number): string {
  return SERVICE_NAMES[i] ?? `svc-${String(i + 1).padStart(2, "0")}`;
}

export function routeName(service: string, j: number): string {
  const resource = service.replace(/^api-/, "");
  const template = ROUTE_TEMPLATES[j];
  return template ? template(resource) : `GET /api/v1/${resource}/r${j + 1}`;
}

/** Relative weights 1/(i+1)^s blended with an even share: skewed, but none near zero. */
export function zipfWeights(n: number, s = ZIPF_S, even = EVEN_SHARE): number[] {
  const raw = Array.from({ length: n }, (_, i) => 1 / Math.pow(i + 1, s));
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => (1 - even) * (w / total) + even / n);
}

export function loadCatalog(services: number, routes: number, seed: number): ServiceSpec[] {
  if (!(Number.isInteger(services) && services >= 1)) throw new RangeError(`services must be ≥ 1, got ${services}`);
  if (!(Number.isInteger(routes) && routes >= 1)) throw new RangeError(`routes must be ≥ 1, got ${routes}`);
  const rng = new Prng(seed ^ 0x5eed_ca7a);
  const serviceWeights = zipfWeights(services);
  const routeWeights = zipfWeights(routes);
  return serviceWeights.map((weight, i) => {
    const service = serviceName(i);
    return { service, weight, routes: routeWeights.map((w, j) => routeSpec(routeName(service, j), w, rng)) };
  });
}

function routeSpec(route: string, weight: number, rng: Prng): RouteSpec {
  const write = !route.startsWith("GET ");
  const median = rng.lognormal(write ? 60 : 25, 0.6);
  return {
    route,
    weight,
    medianMs: Math.min(Math.max(median, 2), 1500),
    sigma: rng.uniform(0.3, 0.8),
    errorRate: rng.uniform(0.005, 0.015),
  };
}

/** Cumulative weights, for picking by binary search instead of a scan. */
export function cumulative(weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let sum = 0;
  weights.forEach((w, i) => (out[i] = sum += w));
  return out;
}

/** Index of the item `u` (uniform in [0, 1)) lands on in cumulative weights `cum`. */
export function pickCumulative(cum: Float64Array, u: number): number {
  const x = u * (cum[cum.length - 1] ?? 0);
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((cum[mid] ?? 0) > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
