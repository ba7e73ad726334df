// Half of a deliberate 2-file import cycle; import-cycles.test.ts must find it.
import { tickOf } from "./tick.js";

export const clock = (): number => tickOf(1);
