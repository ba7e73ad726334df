import { describe, expect, it } from "vitest";
import type { Pane, PaneKind } from "@tidemark/engine/protocol";
import type { StoredPane } from "./pane-store.js";
import { SendQueue } from "./send-queue.js";

let rev = 0;
const sp = (id: string, seq: number, kind: PaneKind): StoredPane => ({
  pane: { id, seq, kind } as Pane,
  json: "",
  rev: ++rev,
});

describe("SendQueue", () => {
  it("coalesces early panes of an id, never on-time/late/final, and keeps seq order per id", () => {
    let coalesced = 0;
    let dropped = 0;
    const q = new SendQueue(2, { coalesced: () => coalesced++, dropped: () => dropped++ });
    q.pushPane(sp("a", 0, "early"));
    q.pushPane(sp("b", 0, "early"));
    q.pushPane(sp("a", 1, "early"));
    q.pushPane(sp("b", 1, "on-time"));
    q.pushPane(sp("b", 2, "late"));
    q.pushFrame("frame");
    q.pushPane(sp("c", 0, "early"));
    q.pushPane(sp("d", 0, "early"));
    const out: string[] = [];
    for (let next = q.take(100); next !== undefined; next = q.take(100))
      out.push(...(typeof next === "string" ? [next] : next.map((s) => `${s.pane.id}${s.pane.seq}`)));
    // a0 and b0 were coalesced; c0 made room by dropping the oldest early pane (a1) when d0 came.
    expect(out).toEqual(["b1", "b2", "frame", "c0", "d0"]);
    expect([coalesced, dropped]).toEqual([2, 1]);
    expect(q.mustDeliver).toBe(0);
  });

  it("keeps only the latest waiting status frame", () => {
    const q = new SendQueue(10, { coalesced: () => undefined, dropped: () => undefined });
    q.pushStatus("s1");
    q.pushPane(sp("a", 0, "final"));
    q.pushStatus("s2");
    const first = q.take(10);
    expect(Array.isArray(first) ? first.map((s) => s.pane.id) : first).toEqual(["a"]);
    expect(q.take(10)).toBe("s2");
    expect(q.take(10)).toBeUndefined();
  });
});
