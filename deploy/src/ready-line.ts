/**
 * Every role prints, once ready, one line `tidemark ready {json}` with the URLs it serves
 * (docs/architecture.md, "Packages and boundaries"), so scripts and tests need not guess.
 */
export const READY_PREFIX = "tidemark ready ";

export function readyLine(info: Record<string, unknown>): string {
  return READY_PREFIX + JSON.stringify(info);
}

/** The JSON of a ready line, or undefined when `line` is not one. */
export function parseReadyLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith(READY_PREFIX)) return undefined;
  return JSON.parse(line.slice(READY_PREFIX.length)) as Record<string, unknown>;
}
