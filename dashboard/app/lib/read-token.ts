/**
 * The page's read token (docs/security.md, "The read token in the browser"): taken once from the
 * URL — `#token=` (a fragment never reaches a server) or the older `?token=` — kept in this tab's
 * sessionStorage, and removed from the address bar and history at once. The WebSocket sends it
 * in its first frame, never in a URL.
 */
const KEY = "tidemark.readToken";

export interface TokenPlace {
  readonly href: string;
  readonly storage: Pick<Storage, "getItem" | "setItem">;
  /** Replaces the current history entry's URL (history.replaceState). */
  replace(url: string): void;
}

export function takeReadToken(place: TokenPlace): string | null {
  const url = new URL(place.href);
  const hash = new URLSearchParams(url.hash.slice(1));
  const given = hash.get("token") ?? url.searchParams.get("token");
  if (given === null || given === "") return place.storage.getItem(KEY);
  place.storage.setItem(KEY, given);
  url.searchParams.delete("token");
  if (hash.has("token")) {
    // A fragment of parameters loses its token; a plain anchor (#errorRate) stays as it is.
    hash.delete("token");
    const rest = hash.toString();
    url.hash = rest === "" ? "" : `#${rest}`;
  }
  place.replace(url.pathname + url.search + url.hash);
  return given;
}
