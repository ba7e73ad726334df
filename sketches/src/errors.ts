/**
 * Every error the sketches throw, with a stable `code` callers can switch on.
 * Messages name the field and say what to do.
 */
export type SketchErrorCode =
  | "TM_SKETCH_NEGATIVE_VALUE"
  | "TM_SKETCH_INVALID_VALUE"
  | "TM_SKETCH_INVALID_COUNT"
  | "TM_SKETCH_INVALID_OPTION"
  | "TM_SKETCH_MISMATCH"
  | "TM_SKETCH_NOT_SUBSET"
  | "TM_SKETCH_CODEC_CORRUPT"
  | "TM_SKETCH_CODEC_TRUNCATED"
  | "TM_SKETCH_CODEC_VERSION";

export class SketchError extends Error {
  readonly code: SketchErrorCode;

  constructor(code: SketchErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "SketchError";
    this.code = code;
  }
}

/** True for the three codec codes: the bytes are not a sketch this version can read. */
export function isCodecError(err: unknown): err is SketchError {
  return err instanceof SketchError && err.code.startsWith("TM_SKETCH_CODEC_");
}

export function invalidValue(field: string, value: number): SketchError {
  if (value < 0) {
    return new SketchError(
      "TM_SKETCH_NEGATIVE_VALUE",
      `${field} must be >= 0, got ${value}; latencies are non-negative, reject the record upstream`,
    );
  }
  return new SketchError("TM_SKETCH_INVALID_VALUE", `${field} must be a finite number, got ${value}`);
}

export function invalidCount(count: number): SketchError {
  return new SketchError("TM_SKETCH_INVALID_COUNT", `count must be a positive safe integer, got ${count}`);
}

export function invalidOption(field: string, value: unknown, expected: string): SketchError {
  return new SketchError("TM_SKETCH_INVALID_OPTION", `${field} must be ${expected}, got ${String(value)}`);
}

export function corrupt(what: string): SketchError {
  return new SketchError("TM_SKETCH_CODEC_CORRUPT", `cannot decode ${what}; the bytes are not a valid encoding`);
}
