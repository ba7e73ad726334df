/**
 * Cardinality caps with a TTL (docs/semantics.md, "Windows"): the first `serviceCap` services keep
 * their name, later ones fold into the service "(other)"; per service the first
 * `routeCapPerService` routes keep theirs, later ones fold into the route "(other)". Folded events
 * are still aggregated, under "(other)", and counted. A name unseen for the key TTL (log time) is
 * forgotten, freeing its place under the cap. Only names that keep their place are stored, so the
 * registry is bounded whatever the input.
 */
export const OTHER_ROUTE = "(other)";
export const OTHER_SERVICE = "(other)";

interface Seen {
  at: number;
}

interface ServiceEntry extends Seen {
  readonly routes: Map<string, Seen>;
}

/** Events folded into "(other)" so far, per kind. */
export interface Overflow {
  services: number;
  routes: number;
}

export class KeyRegistry {
  /** Services that keep their name (and "(other)" once something folded), with their routes. */
  readonly services = new Map<string, ServiceEntry>();
  readonly overflow: Overflow = { services: 0, routes: 0 };
  /** Log time of the next sweep. */
  nextSweep = -Infinity;

  constructor(
    private readonly serviceCap: number,
    private readonly routeCap: number,
  ) {}

  /** The service name to aggregate under, recording that it was seen at `now`. */
  service(name: string, now: number): string {
    const seen = this.services.get(name);
    if (seen !== undefined) {
      seen.at = now;
      return name;
    }
    const named = this.services.size - (this.services.has(OTHER_SERVICE) ? 1 : 0);
    if (named < this.serviceCap || name === OTHER_SERVICE) {
      this.services.set(name, { at: now, routes: new Map() });
      return name;
    }
    this.overflow.services++;
    this.service(OTHER_SERVICE, now);
    return OTHER_SERVICE;
  }

  /** The route name to aggregate under within a (resolved) service, recording that it was seen at `now`. */
  route(service: string, route: string, now: number): string {
    let entry = this.services.get(service);
    if (entry === undefined) this.services.set(service, (entry = { at: now, routes: new Map() }));
    const routes = entry.routes;
    const seen = routes.get(route);
    if (seen !== undefined) {
      seen.at = now;
      return route;
    }
    if (routes.size >= this.routeCap) {
      this.overflow.routes++;
      return OTHER_ROUTE;
    }
    routes.set(route, { at: now });
    return route;
  }

  /** Every keyTtl/4 of log time: forgets names last seen more than keyTtl ago; true when it swept. */
  maintain(now: number, keyTtlMs: number): boolean {
    if (now < this.nextSweep) return false;
    this.sweep(now - keyTtlMs);
    this.nextSweep = now + Math.max(1, Math.floor(keyTtlMs / 4));
    return true;
  }

  /** Forgets routes last seen before `cutoff`, and services too once none of their routes is left. */
  sweep(cutoff: number): void {
    for (const [service, entry] of this.services) {
      for (const [route, seen] of entry.routes) if (seen.at < cutoff) entry.routes.delete(route);
      if (entry.at < cutoff && entry.routes.size === 0) this.services.delete(service);
    }
  }

  /** Restores one service (snapshot); its routes follow with restoreRoute. */
  restoreService(service: string, at: number): void {
    this.services.set(service, { at, routes: new Map() });
  }

  restoreRoute(service: string, route: string, at: number): void {
    this.services.get(service)?.routes.set(route, { at });
  }
}
