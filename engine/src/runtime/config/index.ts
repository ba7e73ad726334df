/**
 * runtime/config — the engine and merge roles' configuration, parsed once (docs/operations.md,
 * "Configuration").
 *
 * Owns: EngineConfig and MergeConfig, their flags, and their readers (defaults < file < env <
 * flags), the sessions setting.
 *
 * May import: core/ (its config validation), protocol, input/partition-list.ts, the runtime root
 * (errors). Nothing else of the runtime: every other folder receives a parsed config.
 *
 * Invariants: a bad value is refused at start with an error naming the field and its source;
 * nothing reads the environment or the config file after parsing.
 */
export { ENGINE_FLAGS, parseEngineConfig, type EngineConfig, type EngineConfigSources } from "./config.js";
export { MERGE_FLAGS, parseMergeConfig, type MergeConfig } from "./merge-config.js";
