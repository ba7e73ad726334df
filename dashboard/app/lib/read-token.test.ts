import { describe, expect, it } from "vitest";
import { takeReadToken } from "./read-token.js";

function place(href: string, stored: string | null = null) {
  const store = new Map<string, string>(stored === null ? [] : [["tidemark.readToken", stored]]);
  const replaced: string[] = [];
  return {
    replaced,
    store,
    place: {
      href,
      storage: {
        getItem: (k: string) => store.get(k) ?? null,
        setItem: (k: string, v: string) => void store.set(k, v),
      },
      replace: (u: string) => void replaced.push(u),
    },
  };
}

describe("the page's read token", () => {
  it("takes it from #token= or ?token=, keeps it in the tab's storage and strips it from the URL", () => {
    const a = place("http://h:3000/?range=1h#token=t0k&x=1");
    expect(takeReadToken(a.place)).toBe("t0k");
    expect(a.replaced).toEqual(["/?range=1h#x=1"]);
    expect(a.store.get("tidemark.readToken")).toBe("t0k");
    const b = place("http://h:3000/sub/?token=old&range=1h#errorRate");
    expect(takeReadToken(b.place)).toBe("old");
    expect(b.replaced).toEqual(["/sub/?range=1h#errorRate"]);
  });

  it("uses the stored token when the URL carries none, and leaves the URL alone", () => {
    const c = place("http://h:3000/?range=1h", "kept");
    expect(takeReadToken(c.place)).toBe("kept");
    expect(c.replaced).toEqual([]);
    expect(takeReadToken(place("http://h:3000/").place)).toBeNull();
  });
});
