/** The per-policy session operator (test oracle): fresh, validated like the real one. */
import type { CoreConfig } from "../../../types.js";
import { validateCoreConfig } from "../../../validate-config.js";
import { validateSessionConfig } from "../../session-config.js";
import { PerPolicySessionOperator } from "./session-operator.js";

export function createPerPolicyOperator(config: CoreConfig, sessions: unknown = {}): PerPolicySessionOperator {
  return new PerPolicySessionOperator(validateCoreConfig(config), validateSessionConfig(sessions));
}
