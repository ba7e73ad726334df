/**
 * The layers of every role's configuration (docs/decisions/0046-layered-config.md): defaults <
 * the config file (tidemark.config.json) < TIDEMARK_* environment < flags. `settingOf` finds the
 * strongest layer that sets a field and says which one it was, so an error can name it.
 */

export type SourceKind = "file" | "env" | "flag" | "option" | "default";

/** Where a value came from: `--checkpoint-every`, `TIDEMARK_CHECKPOINT_EVERY`, `t.json: engine.checkpointEvery`. */
export interface SettingSource {
  readonly kind: SourceKind;
  readonly name: string;
}

export interface Setting {
  readonly value: unknown;
  readonly source: SettingSource;
}

/** The raw layers; values are strings as typed (flags, env) or JSON values (file). */
export interface ConfigSources {
  /** The parsed config file (the whole document). */
  readonly file?: unknown;
  /** How messages name the file (default "config file"). */
  readonly fileName?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Flag values by flag name, without the dashes. */
  readonly flags?: Readonly<Record<string, string | undefined>>;
}

/** The names one field goes by in each layer. */
export interface SettingNames {
  /** The field in messages, e.g. `engine.checkpointEvery`. */
  readonly field: string;
  /** Its dotted path in the config file (`engine.checkpointEvery`, `nats.url`); absent: not in the file. */
  readonly file?: string;
  /** Its environment variables, the first winning over the others. */
  readonly env?: readonly string[];
  /** Its flag, without the dashes. */
  readonly flag?: string;
}

/** How a layer treats a value. */
export interface LayerRules {
  /** An empty environment variable counts as unset (the engine's rule); default true. */
  readonly blankEnvIsUnset?: boolean;
}

/** The value of the strongest layer that sets `names`, with its source; undefined when none does. */
export function settingOf(names: SettingNames, src: ConfigSources, rules: LayerRules = {}): Setting | undefined {
  return layersOf(names, src, rules).at(-1);
}

/**
 * Every layer's value of `names`, weakest first (file, then the variables, the last named first,
 * then the flag). Each is validated, not only the winner: a bad value in the file is an error
 * even while a flag overrides it (`tidemark up` passes flags), so a typo never hides.
 */
export function layersOf(names: SettingNames, src: ConfigSources, rules: LayerRules = {}): Setting[] {
  const out: Setting[] = [];
  if (names.file !== undefined) {
    const v = valueAt(src.file, names.file);
    if (v !== undefined)
      out.push({ value: v, source: { kind: "file", name: `${src.fileName ?? "config file"}: ${names.file}` } });
  }
  for (const name of [...(names.env ?? [])].reverse()) {
    const v = src.env?.[name];
    if (v !== undefined && !(v === "" && rules.blankEnvIsUnset !== false))
      out.push({ value: v, source: { kind: "env", name } });
  }
  const flag = names.flag === undefined ? undefined : src.flags?.[names.flag];
  if (flag !== undefined) out.push({ value: flag, source: { kind: "flag", name: `--${names.flag}` } });
  return out;
}

/** The value at a dotted path of a JSON document; undefined when any step is missing or not an object. */
export function valueAt(doc: unknown, path: string): unknown {
  let at: unknown = doc;
  for (const step of path.split(".")) {
    if (typeof at !== "object" || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}
