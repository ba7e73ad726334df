import { describe, expect, it } from "vitest";
import { KeyRegistry, OTHER_ROUTE, OTHER_SERVICE } from "./key-registry.js";
import { Prng } from "../prng.js";

/** Every (service, route, last seen) the registry would write into a snapshot, in its order. */
function contents(keys: KeyRegistry): [string, number, [string, number][]][] {
  return [...keys.services].map(([service, entry]) => {
    const routes: [string, number][] = [];
    keys.forEachRoute(entry, (route, at) => routes.push([route, at]));
    return [service, entry.at, routes];
  });
}

/** The same rules over plain absolute times: what the registry must be indistinguishable from. */
class PlainRegistry {
  readonly services = new Map<string, { at: number; routes: Map<string, number> }>();
  constructor(
    private readonly serviceCap: number,
    private readonly routeCap: number,
  ) {}
  service(name: string, now: number): string {
    const e = this.services.get(name);
    if (e !== undefined) return ((e.at = now), name);
    const named = this.services.size - (this.services.has(OTHER_SERVICE) ? 1 : 0);
    if (named < this.serviceCap || name === OTHER_SERVICE)
      return (this.services.set(name, { at: now, routes: new Map() }), name);
    this.service(OTHER_SERVICE, now);
    return OTHER_SERVICE;
  }
  route(service: string, route: string, now: number): string {
    let e = this.services.get(service);
    if (e === undefined) this.services.set(service, (e = { at: now, routes: new Map() }));
    if (e.routes.size >= this.routeCap && !e.routes.has(route)) return OTHER_ROUTE;
    e.routes.set(route, now);
    return route;
  }
  sweep(cutoff: number): void {
    for (const [service, e] of this.services) {
      for (const [route, at] of e.routes) if (at < cutoff) e.routes.delete(route);
      if (e.at < cutoff && e.routes.size === 0) this.services.delete(service);
    }
  }
  contents(): [string, number, [string, number][]][] {
    return [...this.services].map(([s, e]) => [s, e.at, [...e.routes]]);
  }
}

describe("KeyRegistry", () => {
  it("keeps, caps and forgets names exactly as with absolute times, integer and fractional alike", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rng = new Prng(seed);
      const fractional = seed % 2 === 0;
      const keys = new KeyRegistry(4, 3);
      const plain = new PlainRegistry(4, 3);
      let now = 1_700_000_000_000 + rng.int(1000);
      for (let i = 0; i < 400; i++) {
        now += fractional && i > 200 ? rng.next() * 50 : rng.int(50);
        const s = `s${rng.int(6)}`;
        const r = `/r${rng.int(5)}`;
        const service = keys.service(s, now);
        expect(service).toBe(plain.service(s, now));
        expect(keys.route(service, r, now)).toBe(plain.route(service, r, now));
        if (rng.int(40) === 0) {
          const cutoff = now - rng.int(2000) - (fractional ? rng.next() : 0);
          keys.sweep(cutoff);
          plain.sweep(cutoff);
        }
        expect(contents(keys)).toEqual(plain.contents());
      }
    }
  });

  it("restores absolute times exactly, whatever they are", () => {
    const keys = new KeyRegistry(10, 10);
    const times = [1_700_000_000_123, 0.1, 1_700_000_000_000.7, -5, 2 ** 52 + 1];
    keys.restoreService("a", 1);
    times.forEach((at, i) => keys.restoreRoute("a", `/r${i}`, at));
    expect(contents(keys)).toEqual([["a", 1, times.map((at, i) => [`/r${i}`, at])]]);
  });

  it("restores a route under its own service, restored last or earlier, and not under a swept one", () => {
    const keys = new KeyRegistry(10, 10);
    keys.restoreService("a", 5);
    keys.restoreService("b", 6);
    keys.restoreRoute("b", "/b", 7);
    keys.restoreRoute("a", "/a", 8);
    keys.restoreRoute("zz", "/z", 9);
    expect(contents(keys)).toEqual([
      ["a", 5, [["/a", 8]]],
      ["b", 6, [["/b", 7]]],
    ]);
    keys.restoreService("c", 1);
    keys.sweep(2);
    keys.restoreRoute("c", "/c", 10);
    expect(contents(keys).map(([s]) => s)).toEqual(["a", "b"]);
  });
});
