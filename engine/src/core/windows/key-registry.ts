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

/**
 * A service's last-seen log time and its routes'. A route's time is kept as its offset from the
 * registry's `base` (the first time it saw): a small integer, held in the Map itself, where an
 * absolute millisecond time would need an object per route (a restore makes one per route kept).
 */
interface ServiceEntry {
  at: number;
  readonly routes: Map<string, number>;
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
  /** Route times are stored as `at - base`; fixed at the first time seen (NaN before). */
  private base = NaN;
  /** The service restoreService restored last (its entry while the registry holds it). */
  private restored: ServiceEntry | undefined = undefined;
  private restoredName: string | null = null;

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
    if (routes.size >= this.routeCap && !routes.has(route)) {
      this.overflow.routes++;
      return OTHER_ROUTE;
    }
    routes.set(route, this.offsetOf(now));
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
      const routes = entry.routes;
      const base = this.base;
      for (const [route, off] of routes) if (base + off < cutoff) routes.delete(route);
      if (entry.at < cutoff && entry.routes.size === 0) {
        this.services.delete(service);
        if (service === this.restoredName) this.restoredName = null;
      }
    }
  }

  /** Restores one service (snapshot); its routes follow with restoreRoute. */
  restoreService(service: string, at: number): void {
    const entry = { at, routes: new Map<string, number>() };
    this.services.set(service, entry);
    this.restored = entry;
    this.restoredName = service;
  }

  restoreRoute(service: string, route: string, at: number): void {
    // The service restored last, without a lookup: a snapshot lists a service's routes after it.
    const entry = service === this.restoredName ? this.restored : this.services.get(service);
    entry?.routes.set(route, this.offsetOf(at));
  }

  /** Each route of `entry` with the log time it was last seen (what a snapshot stores). */
  forEachRoute(entry: ServiceEntry, visit: (route: string, at: number) => void): void {
    const base = this.base;
    entry.routes.forEach((off, route) => visit(route, base + off));
  }

  /**
   * `at` as an offset from the base, fixing the base on first use. An offset must give back `at`
   * exactly (times that are not integers may not): if one would not, the base becomes 0 for good
   * and every stored offset its absolute time (each of those was exact).
   */
  private offsetOf(at: number): number {
    if (this.base !== this.base) this.base = at;
    const off = at - this.base;
    if (this.base + off === at) return off;
    const base = this.base;
    this.base = 0;
    for (const entry of this.services.values()) entry.routes.forEach((o, route) => entry.routes.set(route, base + o));
    return at;
  }
}
