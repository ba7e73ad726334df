export { DDSketch, DEFAULT_RELATIVE_ACCURACY, MAX_BINS } from "./ddsketch.js";
export type { DDSketchOptions } from "./ddsketch.js";
export { HyperLogLog, DEFAULT_PRECISION } from "./hyperloglog.js";
export type { HyperLogLogOptions } from "./hyperloglog.js";
export { RequestAggregate } from "./request-aggregate.js";
export type { RequestAggregateOptions } from "./request-aggregate.js";
export { RequestInput } from "./request-input.js";
export { SketchError, isCodecError } from "./errors.js";
export type { SketchErrorCode } from "./errors.js";
