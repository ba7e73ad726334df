/**
 * One field read across the layers (docs/decisions/0046-layered-config.md): every layer's value
 * through the field's reader (a bad one is an error wherever it is), the strongest one returned,
 * else the default.
 */
import type { FieldReader } from "./field-readers.js";
import { layersOf, type ConfigSources, type LayerRules, type SettingNames } from "./setting-source.js";

export function readSetting<T>(
  names: SettingNames,
  src: ConfigSources,
  read: FieldReader<T>,
  fallback: T,
  rules?: LayerRules,
): T {
  let value = fallback;
  for (const s of layersOf(names, src, rules)) value = read(s.value, names.field, s.source);
  return value;
}
