/** The pure event-time core: no I/O, no clock, no env (design §2, §12). */
export { parseDuration, formatDuration, DurationError } from "./duration.js";
export type {
  AccumulationMode,
  CoreConfig,
  CoreOutput,
  CoreStatus,
  PartitionStatus,
  PolicyConfig,
  PolicyStatus,
  StreamCore,
  WatermarkStrategyConfig,
  WindowConfig,
} from "./types.js";
