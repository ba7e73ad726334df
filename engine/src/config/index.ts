/**
 * `@tidemark/engine/config`: the one layered configuration reader every role uses
 * (docs/decisions/0046-layered-config.md). Contract: defaults < the config file
 * (tidemark.config.json) < TIDEMARK_* environment < flags, resolved by `settingOf`/`readSetting`;
 * field readers that throw ConfigFieldError naming the field, the source of its value, what is
 * allowed and what was found; the core's top-level keys (`CORE_KEYS`) once. Pure: no node:*, no
 * NATS, no process.env (the caller passes the environment), so ingest, the dashboard and deploy
 * import it without the engine's runtime.
 */
export { ConfigFieldError, SECRET_VALUE, show, subjectOf } from "./config-field-error.js";
export {
  layersOf,
  settingOf,
  valueAt,
  type ConfigSources,
  type LayerRules,
  type Setting,
  type SettingNames,
  type SettingSource,
  type SourceKind,
} from "./setting-source.js";
export {
  duration,
  integer,
  list,
  number,
  oneOf,
  onOff,
  optionalPath,
  text,
  url,
  type FieldReader,
} from "./field-readers.js";
export { readSetting } from "./read-setting.js";
export { CORE_KEYS, coreSettingsOf, type CoreKey } from "./core-keys.js";
