/**
 * The demo's made-up system: services, their routes, typical latency and error rates.
 * Traffic weights are relative. Pure data.
 */
export interface RouteSpec {
  readonly route: string;
  readonly weight: number;
  /** Median latency (ms) in normal operation. */
  readonly medianMs: number;
  /** Lognormal shape: larger is a heavier tail. */
  readonly sigma: number;
  /** Share of requests failing (status >= 500) in normal operation. */
  readonly errorRate: number;
}

export interface ServiceSpec {
  readonly service: string;
  readonly weight: number;
  readonly routes: readonly RouteSpec[];
}

const r = (route: string, weight: number, medianMs: number, sigma: number, errorRate: number): RouteSpec => ({
  route,
  weight,
  medianMs,
  sigma,
  errorRate,
});

export const DEMO_CATALOG: readonly ServiceSpec[] = [
  {
    service: "api-gateway",
    weight: 30,
    routes: [
      r("GET /api/v1/feed", 5, 45, 0.5, 0.004),
      r("GET /api/v1/profile", 3, 30, 0.4, 0.002),
      r("POST /api/v1/events", 2, 20, 0.3, 0.003),
    ],
  },
  {
    service: "checkout",
    weight: 12,
    routes: [
      r("POST /cart/items", 4, 60, 0.5, 0.006),
      r("POST /checkout", 2, 220, 0.6, 0.015),
      r("GET /cart", 5, 25, 0.4, 0.002),
    ],
  },
  {
    service: "search",
    weight: 25,
    routes: [r("GET /search", 8, 80, 0.7, 0.005), r("GET /search/suggest", 6, 12, 0.4, 0.001)],
  },
  {
    service: "auth",
    weight: 15,
    routes: [
      r("POST /login", 2, 120, 0.4, 0.008),
      r("POST /token/refresh", 5, 15, 0.3, 0.002),
      r("POST /logout", 1, 10, 0.3, 0.001),
    ],
  },
  {
    service: "inventory",
    weight: 10,
    routes: [r("GET /items/:id", 6, 18, 0.5, 0.003), r("PUT /items/:id/stock", 1, 55, 0.5, 0.01)],
  },
  {
    service: "recommendations",
    weight: 8,
    routes: [r("GET /recs/home", 3, 150, 0.8, 0.01), r("GET /recs/similar", 2, 110, 0.7, 0.008)],
  },
];

/** Picks an item by relative weight with u uniform in [0, 1). */
export function pickWeighted<T extends { readonly weight: number }>(items: readonly T[], u: number): T {
  let total = 0;
  for (const item of items) total += item.weight;
  let x = u * total;
  for (const item of items) {
    x -= item.weight;
    if (x < 0) return item;
  }
  const last = items.at(-1);
  if (last === undefined) throw new RangeError("pickWeighted from an empty list");
  return last;
}
