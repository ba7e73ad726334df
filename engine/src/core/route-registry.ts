/**
 * Per-service route cardinality cap with TTL (design: state hygiene). The first `cap` routes of a
 * service keep their name; later ones fold into "(other)" and are counted. A route unseen for the
 * key TTL (log time) is forgotten, freeing its place under the cap.
 */
export const OTHER_ROUTE = "(other)";

interface Seen {
  at: number;
}

export class RouteRegistry {
  readonly services = new Map<string, Map<string, Seen>>();
  overflowed = 0;

  constructor(private readonly cap: number) {}

  /** The route name to aggregate under, recording that it was seen at `now`. */
  resolve(service: string, route: string, now: number): string {
    let routes = this.services.get(service);
    if (routes === undefined) this.services.set(service, (routes = new Map()));
    const seen = routes.get(route);
    if (seen !== undefined) {
      seen.at = now;
      return route;
    }
    if (routes.size >= this.cap) {
      this.overflowed++;
      return OTHER_ROUTE;
    }
    routes.set(route, { at: now });
    return route;
  }

  /** Forgets routes last seen before `cutoff`. */
  sweep(cutoff: number): void {
    for (const [service, routes] of this.services) {
      for (const [route, seen] of routes) if (seen.at < cutoff) routes.delete(route);
      if (routes.size === 0) this.services.delete(service);
    }
  }

  /** Restores one entry (snapshot). */
  restore(service: string, route: string, at: number): void {
    let routes = this.services.get(service);
    if (routes === undefined) this.services.set(service, (routes = new Map()));
    routes.set(route, { at });
  }
}
