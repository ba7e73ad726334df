/** Grafana-like series colours, assigned to services by name so a service keeps its colour across panels. */
const PALETTE = [
  "#73bf69",
  "#f2cc0c",
  "#8ab8ff",
  "#ff780a",
  "#f2495c",
  "#5794f2",
  "#b877d9",
  "#705da0",
  "#37872d",
  "#fade2a",
];

export function colorOf(name: string, all: readonly string[]): string {
  const i = all.indexOf(name);
  return PALETTE[(i < 0 ? 0 : i) % PALETTE.length] ?? "#73bf69";
}
