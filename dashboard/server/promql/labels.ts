/** Label sets of the PromQL engine (docs/prometheus-api.md, "Series and labels"). */

export const METRIC_NAME = "__name__";

/** A label set; absent and empty values are the same thing, as in Prometheus. */
export type Labels = Readonly<Record<string, string>>;

const signatures = new WeakMap<Labels, string>();

/** A stable identity string of a label set (its non-empty labels, sorted by name). */
export function signature(labels: Labels): string {
  let sig = signatures.get(labels);
  if (sig === undefined) {
    sig = signatureOf(labels, () => true);
    signatures.set(labels, sig);
  }
  return sig;
}

/** The identity of the labels that `keep` accepts. */
export function signatureOf(labels: Labels, keep: (name: string) => boolean): string {
  let sig = "";
  for (const name of Object.keys(labels).sort()) {
    const v = labels[name];
    if (v !== undefined && v !== "" && keep(name)) sig += `${name}\u0000${v}\u0001`;
  }
  return sig;
}

/** The labels that `keep` accepts. */
export function pick(labels: Labels, keep: (name: string) => boolean): Labels {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(labels)) if (v !== "" && keep(name)) out[name] = v;
  return out;
}

const nameless = new WeakMap<Labels, Labels>();

/** The labels without `__name__` (memoized: range queries ask for the same series' at every step). */
export function dropName(labels: Labels): Labels {
  if (!(METRIC_NAME in labels)) return labels;
  let out = nameless.get(labels);
  if (!out) nameless.set(labels, (out = pick(labels, (n) => n !== METRIC_NAME)));
  return out;
}

/** Orders label sets as Prometheus prints them: by their sorted (name, value) pairs. */
export function compareLabels(a: Labels, b: Labels): number {
  const sa = signature(a);
  const sb = signature(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** `{a="b", c="d"}` for error messages. */
export function formatLabels(labels: Labels): string {
  const parts = Object.keys(labels)
    .sort()
    .filter((n) => labels[n] !== "")
    .map((n) => `${n}=${JSON.stringify(labels[n])}`);
  return `{${parts.join(", ")}}`;
}
