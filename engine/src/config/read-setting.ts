/**
 * One field read across the layers (docs/decisions/0046-layered-config.md): the strongest layer's
 * value through the field's reader, else the default.
 */
import type { FieldReader } from "./field-readers.js";
import { settingOf, type ConfigSources, type LayerRules, type SettingNames } from "./setting-source.js";

export function readSetting<T>(
  names: SettingNames,
  src: ConfigSources,
  read: FieldReader<T>,
  fallback: T,
  rules?: LayerRules,
): T {
  const s = settingOf(names, src, rules);
  return s === undefined ? fallback : read(s.value, names.field, s.source);
}
