/** The pure event-time core: no I/O, no clock, no env (design §2, §12). */
export { parseDuration, formatDuration, DurationError } from "./duration.js";
