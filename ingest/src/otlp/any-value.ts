/**
 * Reading OTLP values the same way from a protobufjs-decoded message (int64 as Long, AnyValue
 * with its oneof name in `value`) and from OTLP/JSON (int64 as a decimal string or a number).
 */

interface LongLike {
  toNumber(): number;
  subtract(other: LongLike): LongLike;
  div(divisor: number): LongLike;
}

function isLong(v: unknown): v is LongLike {
  return typeof v === "object" && v !== null && typeof (v as LongLike).toNumber === "function";
}

/**
 * `end − start` in nanoseconds for two int64 values already checked by int64(), computed exactly
 * (Long or BigInt arithmetic) before converting, so latency keeps nanosecond precision.
 */
export function nanosBetween(start: unknown, end: unknown): number {
  if (isLong(start) && isLong(end)) return end.subtract(start).toNumber();
  if (typeof start === "string" && typeof end === "string") return Number(BigInt(end) - BigInt(start));
  return (int64(end) ?? 0) - (int64(start) ?? 0);
}

/**
 * Nanoseconds (an int64 already checked by int64()) as whole milliseconds, divided exactly (Long or
 * BigInt): past 2^53 a nanosecond count is not exact as a double, and dividing the double can land
 * a millisecond early.
 */
export function millisOf(nanos: unknown): number {
  if (isLong(nanos)) return nanos.div(1e6).toNumber();
  if (typeof nanos === "string") return Number(BigInt(nanos) / 1_000_000n);
  return Math.trunc((int64(nanos) ?? 0) / 1e6);
}

/** An int64/fixed64 as a JS number (exact to 2^53, ample for nanoseconds to ~256 ns), or undefined. */
export function int64(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string") return /^-?\d{1,20}$/.test(v) ? Number(v) : undefined;
  if (isLong(v)) return v.toNumber();
  return undefined;
}

/** The scalar inside an AnyValue (string, int, double), or undefined for other kinds/absent. */
export function scalarOf(any: unknown): string | number | undefined {
  if (typeof any !== "object" || any === null) return undefined;
  const a = any as Record<string, unknown>;
  const which = a.value;
  if (typeof which === "string") return scalarField(which, a[which]);
  if (a.stringValue !== undefined) return scalarField("stringValue", a.stringValue);
  if (a.intValue !== undefined) return scalarField("intValue", a.intValue);
  if (a.doubleValue !== undefined) return scalarField("doubleValue", a.doubleValue);
  return undefined;
}

function scalarField(which: string, v: unknown): string | number | undefined {
  if (which === "stringValue") return typeof v === "string" ? v : undefined;
  if (which === "intValue") return int64(v);
  if (which === "doubleValue") return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  return undefined;
}

/** Calls `visit(key, value)` for each well-formed KeyValue of an attribute list. */
export function eachAttribute(list: unknown, visit: (key: string, value: unknown) => void): void {
  if (!Array.isArray(list)) return;
  for (const kv of list) {
    if (typeof kv === "object" && kv !== null && typeof (kv as { key?: unknown }).key === "string")
      visit((kv as { key: string }).key, (kv as { value?: unknown }).value);
  }
}
