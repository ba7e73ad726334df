/**
 * The Node options an engine worker's process runs with (docs/decisions/0051-engine-young-generation.md):
 * a young generation of 2 × 32 MiB semi-spaces instead of V8's 2 × 16 MiB. The engine allocates
 * short-lived objects at the rate of its input (decoded events, panes, late records, partials);
 * with the larger nursery fewer of them are still alive at a scavenge, so fewer are copied and
 * promoted. `tidemark up` starts every worker with these; a worker started by hand takes them in
 * NODE_OPTIONS (docs/operations.md, "Engine workers"). They are V8's, read when the process
 * starts: they cannot be set from inside it.
 */
export const ENGINE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=32"];

/** The flags of ENGINE_NODE_FLAGS this process was not started with (its argv and NODE_OPTIONS). */
export function missingEngineNodeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)]);
  return ENGINE_NODE_FLAGS.filter((f) => !given.has(f));
}
