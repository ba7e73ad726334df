/** How an operator makes its core: fresh, or from snapshot bytes (the restore step's, restore-plan.ts). */
import type { CoreConfig, StreamCore } from "../../core/types.js";

/** How the engine makes its core: fresh, or from snapshot bytes. */
export interface CoreFactory {
  create(config: CoreConfig): StreamCore;
  restore(config: CoreConfig, snapshot: Uint8Array): StreamCore;
}
