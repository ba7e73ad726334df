/** Number, string and duration literals of PromQL, as the Prometheus parser reads them. */

const DAY = 86_400_000;
/** Regex group of each unit's count, and the unit's length in ms. */
const UNITS: ReadonlyArray<readonly [number, number]> = [
  [2, 365 * DAY],
  [4, 7 * DAY],
  [6, DAY],
  [8, 3_600_000],
  [10, 60_000],
  [12, 1000],
  [14, 1],
];
const DURATION = /^((\d+)y)?((\d+)w)?((\d+)d)?((\d+)h)?((\d+)m)?((\d+)s)?((\d+)ms)?$/;

/** `1h30m`, `90s`, `5m` (units y w d h m s ms, largest first) or a number of seconds; ms, or undefined. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (m && text !== "") return UNITS.reduce((ms, [group, size]) => ms + Number(m[group] ?? 0) * size, 0);
  const seconds = numberValue(text);
  return seconds !== undefined && Number.isFinite(seconds) ? Math.round(seconds * 1000) : undefined;
}

/** A number literal: decimal, `0x` hex, `Inf`, `NaN` (any case), with an optional sign; or a duration (its seconds). */
export function numberLiteral(text: string): number | undefined {
  const n = numberValue(text);
  if (n !== undefined) return n;
  const sign = text.startsWith("-") ? -1 : 1;
  const ms = durationMs(text.replace(/^[+-]/, ""));
  return ms === undefined ? undefined : (sign * ms) / 1000;
}

function numberValue(text: string): number | undefined {
  const t = text.replace(/_/g, "");
  const body = t.replace(/^[+-]/, "").toLowerCase();
  const sign = t.startsWith("-") ? -1 : 1;
  if (body === "inf") return sign * Infinity;
  if (body === "nan") return NaN;
  if (/^0x[0-9a-f]+$/.test(body)) return sign * parseInt(body.slice(2), 16);
  if (/^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(body)) return sign * Number(body);
  return undefined;
}

const ESCAPES: Record<string, string> = {
  a: "\u0007",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
  "'": "'",
};

/** The value of a "double", 'single' (Go escapes) or `raw` string literal; undefined when malformed. */
export function stringLiteral(text: string): string | undefined {
  const q = text[0];
  if (text.length < 2 || text[text.length - 1] !== q) return undefined;
  const body = text.slice(1, -1);
  if (q === "`") return body;
  if (q !== '"' && q !== "'") return undefined;
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i] ?? "";
    const hex = (len: number): string | undefined => {
      const h = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) return undefined;
      i += len;
      return String.fromCodePoint(parseInt(h, 16));
    };
    let decoded: string | undefined;
    if (e in ESCAPES) decoded = ESCAPES[e];
    else if (e === "x") decoded = hex(2);
    else if (e === "u") decoded = hex(4);
    else if (e === "U") decoded = hex(8);
    else if (/[0-7]/.test(e) && /^[0-7]{3}$/.test(body.slice(i, i + 3))) {
      decoded = String.fromCharCode(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    }
    if (decoded === undefined) return undefined;
    out += decoded;
  }
  return out;
}
