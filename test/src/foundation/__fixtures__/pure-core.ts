// A pure module: time comes in as an argument.
export function watermark(logTime: number, lagMs: number): number {
  return logTime - lagMs;
}
