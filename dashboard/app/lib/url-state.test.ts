import { describe, expect, it } from "vitest";
import { parseView, viewToSearch } from "./url-state.js";

describe("view state in the URL", () => {
  it("keeps each panel's nowcast toggle, off unless named", () => {
    const v = parseView("?window=10s&nowcast.errorRate=1&nowcast.requests=0&policy.errorRate=alerting");
    expect(v.nowcast).toEqual({ errorRate: true });
    expect(parseView("").nowcast).toEqual({});
    const search = viewToSearch({ ...v, nowcast: { ...v.nowcast, p99: true, users: false } });
    expect(new URLSearchParams(search).getAll("nowcast.errorRate")).toEqual(["1"]);
    expect(parseView(search).nowcast).toEqual({ errorRate: true, p99: true });
    expect(parseView(search).policies).toEqual({ errorRate: "alerting" });
  });

  it('drops "*" from the selected services: the all-services key is no service to pick', () => {
    expect(parseView("?services=checkout,*,search").services).toEqual(["checkout", "search"]);
    expect(parseView("?services=*").services).toEqual([]);
  });
});
