// The other half of the deliberate cycle (clock.ts ↔ tick.ts).
import type { clock } from "./clock.js";

export const tickOf = (n: number): number => n;
export type Clock = typeof clock;
